#include "render/json_writer.hpp"

#include <stdexcept>

// A misuse of the writer (a value where a key belongs, closing what is not open) is a bug
// in the broker: fail the request loudly instead of writing broken JSON.
#define RAPIDJSON_ASSERT(x)                                          \
    do {                                                             \
        if (!(x)) throw std::logic_error("json_writer misuse: " #x); \
    } while (0)
#define RAPIDJSON_HAS_STDSTRING 1
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cmath>
#include <cstring>

namespace queen::render {

struct json_writer::state {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer{buffer};
};

json_writer::json_writer() : s_(std::make_unique<state>()) {}
json_writer::~json_writer() = default;
json_writer::json_writer(json_writer&&) noexcept = default;
json_writer& json_writer::operator=(json_writer&&) noexcept = default;

json_writer& json_writer::begin_object() {
    s_->writer.StartObject();
    return *this;
}

json_writer& json_writer::end_object() {
    s_->writer.EndObject();
    return *this;
}

json_writer& json_writer::begin_array() {
    s_->writer.StartArray();
    return *this;
}

json_writer& json_writer::end_array() {
    s_->writer.EndArray();
    return *this;
}

json_writer& json_writer::key(std::string_view name) {
    s_->writer.Key(name.data(), static_cast<rapidjson::SizeType>(name.size()));
    return *this;
}

json_writer& json_writer::value(std::string_view s) {
    s_->writer.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
    return *this;
}

json_writer& json_writer::value(bool b) {
    s_->writer.Bool(b);
    return *this;
}

json_writer& json_writer::value(double d) {
    if (std::isfinite(d))
        s_->writer.Double(d);
    else
        s_->writer.Null();
    return *this;
}

json_writer& json_writer::value(std::nullptr_t) {
    s_->writer.Null();
    return *this;
}

json_writer& json_writer::signed_value(std::int64_t n) {
    s_->writer.Int64(n);
    return *this;
}

json_writer& json_writer::unsigned_value(std::uint64_t n) {
    s_->writer.Uint64(n);
    return *this;
}

json_writer& json_writer::raw(std::string_view json) {
    // An empty raw value makes the writer put its separator and count the value; the bytes
    // follow in one copy. (RapidJSON's own raw copy goes byte by byte and asserts on NUL,
    // which would turn one corrupt stored payload into a partition that can never be popped.)
    if (json.empty()) json = "null";  // never leave a member without a value
    s_->writer.RawValue("", 0, rapidjson::kObjectType);
    std::memcpy(s_->buffer.Push(json.size()), json.data(), json.size());
    return *this;
}

std::string json_writer::take() {
    if (!s_->writer.IsComplete()) throw std::logic_error("json_writer: the answer is not complete");
    std::string out(s_->buffer.GetString(), s_->buffer.GetSize());
    s_->buffer.Clear();
    s_->writer.Reset(s_->buffer);
    return out;
}

}  // namespace queen::render
