#include "db/record_set.hpp"

#include <charconv>
#include <stdexcept>

namespace queen::db {

std::size_t record_set::column(std::string_view name) const {
    for (std::size_t i = 0; i < columns.size(); ++i)
        if (columns[i] == name) return i;
    throw std::out_of_range("no column " + std::string(name));
}

long long record_set::integer(std::size_t row, std::string_view name) const {
    const auto& v = rows.at(row)[column(name)];
    if (!v) return 0;
    long long n = 0;
    auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
    if (ec != std::errc{} || ptr != v->data() + v->size()) throw std::invalid_argument("not an integer: " + *v);
    return n;
}

}  // namespace queen::db
