#include "render/json_writer.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace queen::render {

namespace {

[[noreturn]] void misuse(const char* what) {
    throw std::logic_error(std::string("json_writer: ") + what);
}

// The bytes a JSON string cannot hold as they are: control characters, '"' and '\\'.
constexpr auto escaped_bytes = [] {
    std::array<bool, 256> t{};
    for (int c = 0; c < 0x20; ++c) t[c] = true;
    t['"'] = t['\\'] = true;
    return t;
}();

// Appends s as a JSON string literal: '"', '\\' and control characters escaped, every other
// byte (UTF-8 included) as it is, in runs.
void append_string(std::string& out, std::string_view s) {
    static constexpr char hex[] = "0123456789abcdef";
    out += '"';
    std::size_t run = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (!escaped_bytes[c]) continue;
        out.append(s.data() + run, i - run);
        run = i + 1;
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            case '\b':
                out += "\\b";
                break;
            case '\f':
                out += "\\f";
                break;
            default:
                out += "\\u00";
                out += hex[c >> 4];
                out += hex[c & 15];
        }
    }
    out.append(s.data() + run, s.size() - run);
    out += '"';
}

template <class T>
void append_number(std::string& out, T n) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, n);  // doubles: the shortest exact form
    out.append(buf, r.ptr);
}

}  // namespace

void json_writer::begin_value() {
    if (open_.empty()) {
        if (root_written_) misuse("a second value after the answer");
        root_written_ = true;
        return;
    }
    auto& top = open_.back();
    if (top.object) {
        if (!top.after_key) misuse("a value where a member name belongs");
        top.after_key = false;
        return;
    }
    if (!top.empty) out_ += ',';
    top.empty = false;
}

void json_writer::close(bool object) {
    if (open_.empty() || open_.back().object != object) misuse(object ? "no object to close" : "no array to close");
    if (open_.back().after_key) misuse("a member name without a value");
    open_.pop_back();
    out_ += object ? '}' : ']';
}

json_writer& json_writer::begin_object() {
    begin_value();
    open_.push_back({true});
    out_ += '{';
    return *this;
}

json_writer& json_writer::end_object() {
    close(true);
    return *this;
}

json_writer& json_writer::begin_array() {
    begin_value();
    open_.push_back({false});
    out_ += '[';
    return *this;
}

json_writer& json_writer::end_array() {
    close(false);
    return *this;
}

void json_writer::begin_member() {
    if (open_.empty() || !open_.back().object) misuse("a member name outside an object");
    auto& top = open_.back();
    if (top.after_key) misuse("two member names in a row");
    if (!top.empty) out_ += ',';
    top.empty = false;
    top.after_key = true;
}

json_writer& json_writer::key(member_name name) {
    begin_member();
    out_ += '"';
    out_ += name.text();
    out_ += "\":";
    return *this;
}

json_writer& json_writer::dynamic_key(std::string_view name) {
    begin_member();
    append_string(out_, name);
    out_ += ':';
    return *this;
}

json_writer& json_writer::value(std::string_view s) {
    begin_value();
    append_string(out_, s);
    return *this;
}

json_writer& json_writer::value(bool b) {
    begin_value();
    out_ += b ? "true" : "false";
    return *this;
}

json_writer& json_writer::value(double d) {
    begin_value();
    if (std::isfinite(d))
        append_number(out_, d);
    else
        out_ += "null";
    return *this;
}

json_writer& json_writer::value(std::nullptr_t) {
    begin_value();
    out_ += "null";
    return *this;
}

json_writer& json_writer::signed_value(std::int64_t n) {
    begin_value();
    append_number(out_, n);
    return *this;
}

json_writer& json_writer::unsigned_value(std::uint64_t n) {
    begin_value();
    append_number(out_, n);
    return *this;
}

json_writer& json_writer::raw(std::string_view json) {
    begin_value();
    out_ += json.empty() ? std::string_view("null") : json;  // never a member without a value
    return *this;
}

std::string json_writer::take() {
    if (!open_.empty() || !root_written_) misuse("the answer is not complete");
    root_written_ = false;
    std::string done = std::move(out_);
    out_.clear();
    return done;
}

}  // namespace queen::render
