#pragma once
// Process-wide structured-ish logging to stderr: one line per event, UTC time, level.
#include <fmt/core.h>

#include <string_view>

namespace queen::log {

enum class level { debug, info, warn, error };

void set_min_level(level l);
void write(level l, std::string_view message);

template <typename... Args>
void info(fmt::format_string<Args...> f, Args&&... args) {
    write(level::info, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void warn(fmt::format_string<Args...> f, Args&&... args) {
    write(level::warn, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void error(fmt::format_string<Args...> f, Args&&... args) {
    write(level::error, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void debug(fmt::format_string<Args...> f, Args&&... args) {
    write(level::debug, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace queen::log
