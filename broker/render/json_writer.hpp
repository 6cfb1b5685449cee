#pragma once
// The one way the broker writes JSON answers: a streaming writer onto one string (RFC 8259:
// strings escaped, numbers in their shortest exact form). JSON text the broker already holds
// (stored payloads, jsonb read from the database) goes in verbatim through raw(), never
// parsed again. A misuse (a value where a member name belongs, closing what is not open, an
// unfinished answer) throws std::logic_error instead of writing broken JSON.
#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace queen::render {

// A member name: a string literal, checked at compile time to need no escaping, so writing
// it is one copy. (Every name the broker writes is fixed by the contract.)
class member_name {
public:
    template <std::size_t N>
    consteval member_name(const char (&s)[N]) : text_(s, N - 1) {
        for (char c : text_)
            if (static_cast<unsigned char>(c) < 0x20 || c == '"' || c == '\\')
                throw "a member name must not need escaping";  // not a constant expression: a compile error
    }
    constexpr std::string_view text() const noexcept { return text_; }

private:
    std::string_view text_;
};

class json_writer {
public:
    json_writer() = default;
    // Reserves room for an answer of about `expected_bytes`, so a large one is not copied
    // while it grows.
    explicit json_writer(std::size_t expected_bytes) { out_.reserve(expected_bytes); }

    json_writer& begin_object();
    json_writer& end_object();
    json_writer& begin_array();
    json_writer& end_array();
    // The next member's name; only inside an object.
    json_writer& key(member_name name);
    // A member name that is data (a queue name as a key), escaped like a string value.
    json_writer& dynamic_key(std::string_view name);

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
    json_writer& field(member_name name, const T& v) {
        key(name);
        return value(v);
    }
    json_writer& raw_field(member_name name, std::string_view json) {
        key(name);
        return raw(json);
    }

    // The finished text; throws std::logic_error when an object or array is still open.
    std::string take();

private:
    void begin_member();  // the comma and state checks before a member name
    json_writer& signed_value(std::int64_t n);
    json_writer& unsigned_value(std::uint64_t n);
    // Puts the separator a value needs where it goes; throws where no value may go.
    void begin_value();
    void close(bool object);

    struct level {
        bool object = false;
        bool empty = true;
        bool after_key = false;  // an object's member name was written, its value not yet
    };
    std::string out_;
    std::vector<level> open_;
    bool root_written_ = false;
};

}  // namespace queen::render
