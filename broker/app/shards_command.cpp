#include "app/shards_command.hpp"

#include "app/shard_move.hpp"
#include "db/conninfo.hpp"

#include "schema/shard_proxy_installer.hpp"
#include "store/shards_store.hpp"

#include <fmt/core.h>

#include <chrono>
#include <stdexcept>

namespace queen::app {

namespace {

constexpr const char* usage =
    "usage: queen shards init --proxy <url> --shard <url> [--shard <url>...] [--logical-shards N]\n"
    "       queen shards status --proxy <url>\n"
    "       queen shards move <logical shard> --to <url> --proxy <url> [--proxy <url>...]\n";

// How long init waits for a database that is still starting.
constexpr std::chrono::milliseconds connect_wait{10000};

struct shard_arguments {
    std::string command;
    schema::shard_layout layout;
    shard_move_request move;
};

// A logical shard's number; throws std::invalid_argument naming the text.
int logical_shard_number(const std::string& text) {
    std::size_t used = 0;
    int n = -1;
    try {
        n = std::stoi(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || n < 0)
        throw std::invalid_argument("the logical shard must be a number, not '" + text + "'");
    return n;
}

// The arguments after `shards`; throws std::invalid_argument naming what is wrong.
shard_arguments parse(const std::vector<std::string>& args) {
    if (args.empty()) throw std::invalid_argument("a command is needed (init, status or move)");
    shard_arguments out;
    out.command = args[0];
    if (out.command != "init" && out.command != "status" && out.command != "move")
        throw std::invalid_argument("unknown command '" + out.command + "' (init, status or move)");
    std::size_t first_flag = 1;
    if (out.command == "move") {
        if (args.size() < 2 || args[1].rfind("--", 0) == 0)
            throw std::invalid_argument("move needs the logical shard to move");
        out.move.logical_shard = logical_shard_number(args[1]);
        first_flag = 2;
    }
    for (std::size_t i = first_flag; i < args.size(); ++i) {
        const std::string& flag = args[i];
        if (i + 1 >= args.size()) throw std::invalid_argument(flag + " needs a value");
        const std::string& value = args[++i];
        if (flag == "--proxy" && out.command == "move") {
            out.move.proxies.push_back(value);
            out.layout.proxy = value;
        } else if (flag == "--proxy") {
            out.layout.proxy = value;
        } else if (flag == "--to" && out.command == "move") {
            out.move.target = value;
        } else if (flag == "--shard" && out.command == "init") {
            out.layout.shards.push_back(value);
        } else if (flag == "--logical-shards" && out.command == "init") {
            std::size_t used = 0;
            int n = 0;
            try {
                n = std::stoi(value, &used);
            } catch (const std::exception&) {
                used = 0;
            }
            if (used != value.size() || n < 1 || n > 1024 || (n & (n - 1)) != 0)
                throw std::invalid_argument("--logical-shards must be a power of 2 from 1 to 1024, not '" + value +
                                            "'");
            out.layout.logical_shards = n;
        } else {
            throw std::invalid_argument("unknown option " + flag + " for " + out.command);
        }
    }
    if (out.layout.proxy.empty()) throw std::invalid_argument("--proxy is needed");
    if (out.command == "move" && out.move.target.empty()) throw std::invalid_argument("--to is needed");
    if (out.command == "init") {
        if (out.layout.shards.empty()) throw std::invalid_argument("at least one --shard is needed");
        if (static_cast<int>(out.layout.shards.size()) > out.layout.logical_shards)
            throw std::invalid_argument(fmt::format("{} shards need at least as many logical shards (--logical-shards)",
                                                    out.layout.shards.size()));
    }
    return out;
}

// PL/Proxy keeps the cluster's strings in pg_foreign_server.srvoptions, which every role on the
// proxy database reads: a password in one is said at once, and not stored quietly.
void warn_of_passwords(const schema::shard_layout& layout) {
    for (std::size_t i = 0; i < layout.shards.size(); ++i)
        if (db::carries_password(layout.shards[i]))
            fmt::print(stderr,
                       "queen shards init: warning: shard {} ({}) carries a password; the proxy stores it in "
                       "pg_foreign_server, where every role of the proxy database can read it: use ~/.pgpass or a "
                       "user mapping instead (docs/scaling.md, \"Passwords\")\n",
                       i, db::redact_passwords(layout.shards[i]));
}

int init(const schema::shard_layout& layout) {
    warn_of_passwords(layout);
    const auto report = schema::install_shards(layout, connect_wait);
    for (std::size_t i = 0; i < layout.shards.size(); ++i)
        fmt::print("shard {}: schema ready{}\n", i, report.extension[i] ? ", queen_ext installed" : "");
    fmt::print("proxy: cluster queen_shards with {} logical shards over {} databases; {} functions generated\n",
               layout.logical_shards, layout.shards.size(), report.functions);
    return 0;
}

int status(const std::string& proxy) {
    const auto databases = store::read_shard_databases(proxy);
    const auto rows = store::read_shard_status(proxy);
    fmt::print("{} shard databases\n", databases.size());
    fmt::print("{:<24} {:>6} {:>12} {:>12} {:>14}\n", "database", "port", "partitions", "messages", "bytes");
    for (const auto& r : rows)
        fmt::print("{:<24} {:>6} {:>12} {:>12} {:>14}\n", r.database, r.port, r.partitions, r.messages, r.bytes);
    return 0;
}

int move(const shard_move_request& request) {
    const auto r = move_shard(request, connect_wait);
    if (r.finished_earlier) {
        fmt::print("logical shard {} was already on {}; the interrupted move's source released it\n",
                   request.logical_shard, db::redact_passwords(r.target));
        return 0;
    }
    fmt::print("logical shard {} moved: {} partitions ({} rows) from {} to {}; its writes waited {} ms\n",
               request.logical_shard, r.partitions, r.rows, db::redact_passwords(r.source),
               db::redact_passwords(r.target), r.fenced.count());
    if (r.target_new)
        fmt::print(
            "{} is a new shard database{}: restart the brokers (one at a time) so that they listen and run "
            "housekeeping there\n",
            db::redact_passwords(r.target), r.extension ? " (queen_ext installed)" : "");
    return 0;
}

}  // namespace

int shards_command(const std::vector<std::string>& args) {
    shard_arguments parsed;
    try {
        parsed = parse(args);
    } catch (const std::invalid_argument& e) {
        fmt::print(stderr, "queen shards: {}\n{}", db::redact_passwords(e.what()), usage);
        return 2;
    }
    try {
        if (parsed.command == "init") return init(parsed.layout);
        if (parsed.command == "move") return move(parsed.move);
        return status(parsed.layout.proxy);
    } catch (const std::exception& e) {
        // Errors quote connection strings, and servers' errors may quote the cluster's options.
        fmt::print(stderr, "queen shards {}: {}\n", parsed.command, db::redact_passwords(e.what()));
        return 1;
    }
}

}  // namespace queen::app
