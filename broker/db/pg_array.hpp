#pragma once
// PostgreSQL text-format array literals for query parameters ({"a","b",NULL}).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace queen::db {

// Builds one array literal element by element.
class pg_array_builder {
public:
    pg_array_builder() { out_ = "{"; }
    void add(std::string_view value);  // quoted and escaped
    void add_null();
    void add_optional(std::optional<std::string_view> value) { value ? add(*value) : add_null(); }
    void add(std::int64_t value);
    void add(bool value) {
        comma();
        out_ += value ? "t" : "f";
    }
    // The finished literal; the builder is then empty.
    std::string finish();

private:
    void comma() {
        if (!first_) out_ += ',';
        first_ = false;
    }
    std::string out_;
    bool first_ = true;
};

}  // namespace queen::db
