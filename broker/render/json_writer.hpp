#pragma once
// The one way the broker writes JSON answers: a streaming writer onto one string. Escaping
// and number formatting are RapidJSON's; JSON text the broker already holds (stored payloads,
// jsonb read from the database) goes in verbatim through raw(), never parsed again.
#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace queen::render {

class json_writer {
public:
    json_writer();
    ~json_writer();
    json_writer(json_writer&&) noexcept;
    json_writer& operator=(json_writer&&) noexcept;

    json_writer& begin_object();
    json_writer& end_object();
    json_writer& begin_array();
    json_writer& end_array();
    // The next member's name; only inside an object.
    json_writer& key(std::string_view name);

    json_writer& value(std::string_view s);
    json_writer& value(const std::string& s) { return value(std::string_view(s)); }
    json_writer& value(const char* s) { return value(std::string_view(s)); }
    json_writer& value(bool b);
    json_writer& value(double d);  // non-finite numbers are written as null
    json_writer& value(std::nullptr_t);
    template <std::integral T>
    requires(!std::same_as<T, bool> && !std::same_as<T, char>) json_writer& value(T n) {
        if constexpr (std::is_signed_v<T>)
            return signed_value(n);
        else
            return unsigned_value(n);
    }
    template <class T>
    json_writer& value(const std::optional<T>& v) {
        return v ? value(*v) : value(nullptr);
    }
    // `json` must be one complete, valid JSON value; it is copied as it is (empty: null).
    json_writer& raw(std::string_view json);

    template <class T>
    json_writer& field(std::string_view name, const T& v) {
        key(name);
        return value(v);
    }
    json_writer& raw_field(std::string_view name, std::string_view json) {
        key(name);
        return raw(json);
    }

    // The finished text; throws std::logic_error when an object or array is still open.
    std::string take();

private:
    json_writer& signed_value(std::int64_t n);
    json_writer& unsigned_value(std::uint64_t n);

    struct state;
    std::unique_ptr<state> s_;
};

}  // namespace queen::render
