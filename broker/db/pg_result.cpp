#include "db/pg_result.hpp"

#include "util/big_endian.hpp"

#include <fmt/core.h>

#include <charconv>
#include <cstring>
#include <stdexcept>
#include <string>

namespace queen::db {

namespace {

// Type OIDs from pg_type.h (catalog/pg_type_d.h is a server header).
constexpr Oid kInt8Oid = 20;
constexpr Oid kInt2Oid = 21;
constexpr Oid kInt4Oid = 23;
constexpr Oid kOidOid = 26;

using util::load_be;

}  // namespace

int pg_result::rows() const noexcept {
    return res_ ? PQntuples(res_.get()) : 0;
}

int pg_result::columns() const noexcept {
    return res_ ? PQnfields(res_.get()) : 0;
}

int pg_result::column(const char* name) const {
    int c = res_ ? PQfnumber(res_.get(), name) : -1;
    if (c < 0) throw std::out_of_range(fmt::format("result has no column \"{}\"", name));
    return c;
}

bool pg_result::is_null(int row, int col) const noexcept {
    if (!res_ || row < 0 || col < 0 || row >= rows() || col >= columns()) return true;
    return PQgetisnull(res_.get(), row, col) != 0;
}

bool pg_result::binary(int col) const noexcept {
    if (!res_ || col < 0 || col >= columns()) return false;
    return PQfformat(res_.get(), col) == 1;
}

std::string_view pg_result::text(int row, int col) const {
    if (!res_ || row < 0 || col < 0 || row >= rows() || col >= columns())
        throw std::out_of_range(
            fmt::format("result cell ({}, {}) out of range ({} rows, {} columns)", row, col, rows(), columns()));
    const char* v = PQgetvalue(res_.get(), row, col);
    int len = PQgetlength(res_.get(), row, col);
    return {v, static_cast<std::size_t>(len)};
}

std::optional<std::string_view> pg_result::opt_text(int row, int col) const {
    auto v = text(row, col);  // range check first
    if (PQgetisnull(res_.get(), row, col)) return std::nullopt;
    return v;
}

std::span<const std::uint8_t> pg_result::bytes(int row, int col) const {
    auto v = text(row, col);
    return {reinterpret_cast<const std::uint8_t*>(v.data()), v.size()};
}

std::int64_t pg_result::int64(int row, int col) const {
    auto v = text(row, col);
    if (PQgetisnull(res_.get(), row, col))
        throw std::runtime_error(fmt::format("int64({}, {}): value is NULL", row, col));
    if (binary(col)) {
        const Oid type = PQftype(res_.get(), col);
        switch (v.size()) {
            case 2:
                if (type == kInt2Oid || type == 0)
                    return static_cast<std::int16_t>(static_cast<std::uint16_t>(load_be(v.data(), 2)));
                break;
            case 4:
                if (type == kOidOid) return static_cast<std::int64_t>(load_be(v.data(), 4));
                if (type == kInt4Oid || type == 0)
                    return static_cast<std::int32_t>(static_cast<std::uint32_t>(load_be(v.data(), 4)));
                break;
            case 8:
                if (type == kInt8Oid || type == 0) return static_cast<std::int64_t>(load_be(v.data(), 8));
                break;
            default:
                break;
        }
        throw std::runtime_error(fmt::format(
            "int64({}, {}): binary value of type oid {} and {} bytes is not an integer", row, col, type, v.size()));
    }
    std::int64_t out = 0;
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    if (ec != std::errc() || ptr != v.data() + v.size())
        throw std::runtime_error(fmt::format("int64({}, {}): \"{}\" is not a 64-bit integer", row, col, v));
    return out;
}

bool pg_result::boolean(int row, int col) const {
    auto v = text(row, col);
    if (PQgetisnull(res_.get(), row, col))
        throw std::runtime_error(fmt::format("boolean({}, {}): value is NULL", row, col));
    if (binary(col)) {
        if (v.size() == 1) return v[0] != 0;
        throw std::runtime_error(fmt::format("boolean({}, {}): binary value of {} bytes", row, col, v.size()));
    }
    if (v == "t" || v == "true" || v == "1" || v == "on" || v == "yes") return true;
    if (v == "f" || v == "false" || v == "0" || v == "off" || v == "no") return false;
    throw std::runtime_error(fmt::format("boolean({}, {}): \"{}\" is not a boolean", row, col, v));
}

}  // namespace queen::db
