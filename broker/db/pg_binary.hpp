#pragma once
// Reading PostgreSQL binary-format values that pg_result does not type itself.
#include "db/pg_result.hpp"
#include "util/big_endian.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace queen::db {

// timestamptz (binary: µs since 2000-01-01) as Unix microseconds.
inline std::int64_t timestamp_us(const pg_result& res, int row, int col) {
    auto b = res.text(row, col);
    if (b.size() != 8) throw std::runtime_error("timestamptz value is not 8 bytes");
    return static_cast<std::int64_t>(util::load_be64(b.data())) + 946684800LL * 1000000LL;
}

// uuid (binary: 16 bytes).
inline std::array<std::uint8_t, 16> uuid_bytes(const pg_result& res, int row, int col) {
    auto b = res.text(row, col);
    if (b.size() != 16) throw std::runtime_error("uuid value is not 16 bytes");
    std::array<std::uint8_t, 16> out{};
    for (int i = 0; i < 16; ++i) out[i] = static_cast<std::uint8_t>(b[i]);
    return out;
}

// A nullable text column as a string (nullopt for NULL).
inline std::optional<std::string> opt_text(const pg_result& res, int row, int col) {
    if (res.is_null(row, col)) return std::nullopt;
    return std::string(res.text(row, col));
}

// A nullable binary timestamptz as Unix microseconds (nullopt for NULL).
inline std::optional<std::int64_t> opt_timestamp_us(const pg_result& res, int row, int col) {
    if (res.is_null(row, col)) return std::nullopt;
    return timestamp_us(res, row, col);
}

}  // namespace queen::db
