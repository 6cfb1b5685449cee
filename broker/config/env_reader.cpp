#include "config/env_reader.hpp"

#include <fmt/core.h>

#include <charconv>
#include <stdexcept>

namespace queen::config {

std::optional<env_value> first_set(const env_map& env, std::initializer_list<const char*> names) {
    for (const char* name : names) {
        auto it = env.find(name);
        if (it != env.end() && !it->second.empty()) return env_value{name, it->second};
    }
    return std::nullopt;
}

long long parse_number(const std::string& key, const std::string& value, long long min, long long max) {
    long long out = 0;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
    if (ec != std::errc{} || ptr != value.data() + value.size() || out < min || out > max) {
        throw std::invalid_argument(fmt::format("{} must be an integer in [{}, {}], got '{}'", key, min, max, value));
    }
    return out;
}

bool parse_bool(const std::string& key, const std::string& value) {
    if (value == "1" || value == "true" || value == "on" || value == "yes") return true;
    if (value == "0" || value == "false" || value == "off" || value == "no") return false;
    throw std::invalid_argument(fmt::format("{} must be true/false/1/0, got '{}'", key, value));
}

std::optional<std::string> env_reader::text(const char* label, std::initializer_list<const char*> names) {
    auto v = first_set(env_, names);
    if (!v) return std::nullopt;
    sources_[label] = v->name;
    return v->value;
}

std::optional<long long> env_reader::number(const char* label, std::initializer_list<const char*> names, long long min,
                                            long long max) {
    auto v = first_set(env_, names);
    if (!v) return std::nullopt;
    const long long n = parse_number(v->name, v->value, min, max);
    sources_[label] = v->name;
    return n;
}

std::optional<bool> env_reader::boolean(const char* label, std::initializer_list<const char*> names) {
    auto v = first_set(env_, names);
    if (!v) return std::nullopt;
    const bool b = parse_bool(v->name, v->value);
    sources_[label] = v->name;
    return b;
}

}  // namespace queen::config
