#include "db/pg_array.hpp"

namespace queen::db {

void pg_array_builder::add(std::string_view value) {
    comma();
    out_ += '"';
    for (char c : value) {
        if (c == '"' || c == '\\') out_ += '\\';
        out_ += c;
    }
    out_ += '"';
}

void pg_array_builder::add_null() {
    comma();
    out_ += "NULL";
}

void pg_array_builder::add(std::int64_t value) {
    comma();
    out_ += std::to_string(value);
}

std::string pg_array_builder::finish() {
    out_ += '}';
    std::string result = std::move(out_);
    out_ = "{";
    first_ = true;
    return result;
}

}  // namespace queen::db
