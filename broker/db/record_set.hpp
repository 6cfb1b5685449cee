#pragma once
// Rows of a query as text, with each column's kind: what the store hands up for answers that
// are written column by column (render/record_writer.hpp writes them as JSON).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace queen::db {

enum class value_kind { integer, number, boolean, text };

struct record_set {
    std::vector<std::string> columns;
    std::vector<value_kind> kinds;
    std::vector<std::vector<std::optional<std::string>>> rows;  // NULL: nullopt

    std::size_t size() const noexcept { return rows.size(); }
    // The column's index; throws std::out_of_range when there is none.
    std::size_t column(std::string_view name) const;
    // A value as an integer (0 for NULL); throws std::invalid_argument if it is not one.
    long long integer(std::size_t row, std::string_view name) const;
};

}  // namespace queen::db
