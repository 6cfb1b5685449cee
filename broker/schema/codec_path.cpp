#include "schema/codec_path.hpp"

#include "store/boot_store.hpp"

#include <fmt/format.h>

#include <memory>
#include <stdexcept>

namespace queen::schema {

codec_path detect_codec_path(const std::string& conninfo) {
    codec_path path;
    path.extension_version = store::read_codec_extension(conninfo);
    return path;
}

std::string describe(const codec_path& path) {
    if (path.accelerated())
        return fmt::format(
            "codec path: queen_ext {} (accelerated: zstd segments and the operations its version "
            "runs in C, docs/extension.md)",
            *path.extension_version);
    return "codec path: sql (stock PostgreSQL, no extension: raw segments decoded by PL/pgSQL)";
}

void enforce(config::extension_policy policy, const codec_path& path) {
    if (policy == config::extension_policy::require && !path.accelerated())
        throw std::runtime_error(
            "QUEEN_EXTENSION=require but the queen_ext extension is not installed in this database; "
            "install it (make -f Makefile.pgxs install) and run CREATE EXTENSION queen_ext, or set "
            "QUEEN_EXTENSION=auto");
    if (policy == config::extension_policy::off && path.accelerated())
        throw std::runtime_error(fmt::format(
            "QUEEN_EXTENSION=off but queen_ext {} is installed in this database, and the codec path is the "
            "database's, not a broker's: run DROP EXTENSION queen_ext (zstd segments stay readable), or set "
            "QUEEN_EXTENSION=auto",
            *path.extension_version));
}

}  // namespace queen::schema
