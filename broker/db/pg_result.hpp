#pragma once
// RAII owner of a PGresult with typed accessors.
#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

namespace queen::db {

class pg_result {
public:
    pg_result() = default;
    explicit pg_result(PGresult* res) : res_(res, &PQclear) {}

    int rows() const noexcept;
    int columns() const noexcept;
    int column(const char* name) const;  // throws std::out_of_range if missing
    bool is_null(int row, int col) const noexcept;
    bool binary(int col) const noexcept;            // column in binary format?
    std::string_view text(int row, int col) const;  // raw value bytes (text or binary)
    std::optional<std::string_view> opt_text(int row, int col) const;
    std::span<const std::uint8_t> bytes(int row, int col) const;  // binary-format value
    std::int64_t int64(int row, int col) const;                   // text or binary int2/4/8
    bool boolean(int row, int col) const;                         // text 't'/'f' or binary
    PGresult* get() const noexcept { return res_.get(); }

private:
    std::shared_ptr<PGresult> res_;
};

}  // namespace queen::db
