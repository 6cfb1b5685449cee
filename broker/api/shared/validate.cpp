#include "api/shared/validate.hpp"

#include "api/shared/api_error.hpp"
#include "api/shared/json_guard.hpp"
#include "domain/message_id.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cmath>

#include <charconv>

namespace queen::api {

void check_name(const std::string& what, std::string_view value, const config::limits& lim) {
    if (value.empty()) throw bad_request(what + " must not be empty");
    if (value.size() > lim.max_name_bytes)
        throw bad_request(fmt::format("{} is {} bytes long; the limit is {}", what, value.size(), lim.max_name_bytes));
    if (value.find('\0') != std::string_view::npos) throw bad_request(what + " must not contain NUL characters");
}

void check_no_nul(const std::string& what, std::string_view value) {
    if (value.find('\0') != std::string_view::npos)
        throw bad_request(what + " must not contain NUL characters (\\u0000)");
}

namespace {

[[noreturn]] void payload_too_deep(const std::string& what, const config::limits& lim) {
    throw bad_request(
        fmt::format("{} nests deeper than {} levels, the limit for payloads", what, lim.max_payload_depth));
}

}  // namespace

void check_payload_depth(const nlohmann::json& payload, const std::string& what, const config::limits& lim) {
    if (json_nesting_depth(payload, lim.max_payload_depth) > lim.max_payload_depth) payload_too_deep(what, lim);
}

void check_payload_text_depth(std::string_view payload, const std::string& what, const config::limits& lim) {
    if (json_text_depth(payload) > lim.max_payload_depth) payload_too_deep(what, lim);
}

std::int64_t json_integer(const nlohmann::json& value, const std::string& what, std::int64_t min, std::int64_t max) {
    auto out_of_range = [&] {
        return bad_request(fmt::format("{} must be between {} and {}, got {}", what, min, max, value.dump()));
    };
    if (value.is_number_unsigned()) {
        const auto u = value.get<std::uint64_t>();
        if (max < 0 || u > static_cast<std::uint64_t>(max)) throw out_of_range();
        const auto n = static_cast<std::int64_t>(u);
        if (n < min) throw out_of_range();
        return n;
    }
    if (value.is_number_integer()) {
        const auto n = value.get<std::int64_t>();
        if (n < min || n > max) throw out_of_range();
        return n;
    }
    if (value.is_number_float()) {
        const double d = value.get<double>();
        if (!std::isfinite(d) || d != std::floor(d)) throw bad_request(fmt::format("{} must be an integer", what));
        // Compared as doubles before the cast: a double past int64's range has no int64 value.
        if (d < static_cast<double>(min) || d > static_cast<double>(max)) throw out_of_range();
        const auto n = static_cast<std::int64_t>(d);
        if (n < min || n > max) throw out_of_range();
        return n;
    }
    throw bad_request(fmt::format("{} must be an integer", what));
}

std::optional<std::int64_t> parse_partition_id(std::string_view text) {
    std::int64_t v = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size() || v <= 0) return std::nullopt;
    return v;
}

std::int64_t query_int(const std::map<std::string, std::string>& query, const char* key, std::int64_t fallback,
                       std::int64_t min, std::int64_t max) {
    auto it = query.find(key);
    if (it == query.end() || it->second.empty()) return fallback;
    const std::string& text = it->second;
    std::int64_t v = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc{} || ptr != text.data() + text.size())
        throw bad_request(fmt::format("{} must be an integer, got '{}'", key, text));
    if (v < min || v > max) throw bad_request(fmt::format("{} must be between {} and {}, got {}", key, min, max, v));
    return v;
}

std::optional<std::string> query_name(const std::map<std::string, std::string>& query, const char* key,
                                      const config::limits& lim) {
    auto it = query.find(key);
    if (it == query.end() || it->second.empty()) return std::nullopt;
    check_name(key, it->second, lim);
    return it->second;
}

std::optional<std::int64_t> query_time(const std::map<std::string, std::string>& query, const char* key) {
    auto it = query.find(key);
    if (it == query.end() || it->second.empty()) return std::nullopt;
    auto t = domain::parse_iso_time(it->second);
    if (!t) throw bad_request(fmt::format("{} must be an ISO-8601 time stamp, got '{}'", key, it->second));
    return t;
}

}  // namespace queen::api
