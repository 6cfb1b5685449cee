#include "app/command_line.hpp"

#include "schema/migrator.hpp"

#include <fmt/core.h>
#include <libpq-fe.h>
#include <openssl/opensslv.h>
#include <boost/version.hpp>

namespace queen::app {

command parse_command_line(const std::vector<std::string>& args) {
    if (args.empty()) return {};
    const std::string& first = args.front();
    if (first == "shards") return {command_kind::shards, {args.begin() + 1, args.end()}, {}};
    if ((first == "--help" || first == "-h" || first == "help") && args.size() == 1)
        return {command_kind::help, {}, {}};
    if ((first == "--version" || first == "-V") && args.size() == 1) return {command_kind::version, {}, {}};
    if (first == "--help" || first == "-h" || first == "help" || first == "--version" || first == "-V")
        return {command_kind::usage_error, {}, "'" + first + "' takes no arguments"};
    return {command_kind::usage_error, {}, "unknown argument '" + first + "'"};
}

std::string usage_text() {
    return "usage: queen                 serve the broker (settings from the environment: README.md)\n"
           "       queen shards init --proxy <url> --shard <url> [--shard <url>...] [--logical-shards N]\n"
           "       queen shards status --proxy <url>\n"
           "       queen shards move <logical shard> --to <url> --proxy <url> [--proxy <url>...]\n"
           "       queen --help         this text\n"
           "       queen --version      the versions built into this binary\n";
}

std::string version_text() {
    const int libpq = PQlibVersion();
    return fmt::format("queen {}\nschema version {}\nqueen_ext {} (optional)\nlibpq {}.{}\n{}\nBoost {}.{}.{}\n",
                       QUEEN_VERSION, schema::embedded_schema_version(), QUEEN_EXT_DEFAULT_VERSION, libpq / 10000,
                       libpq % 10000, OPENSSL_VERSION_TEXT, BOOST_VERSION / 100000, BOOST_VERSION / 100 % 1000,
                       BOOST_VERSION % 100);
}

}  // namespace queen::app
