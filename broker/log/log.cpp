#include "log/log.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace queen::log {
namespace {
std::atomic<level> min_level{level::info};
std::mutex write_mutex;

const char* name(level l) {
    switch (l) {
        case level::debug:
            return "DEBUG";
        case level::info:
            return "INFO";
        case level::warn:
            return "WARN";
        case level::error:
            return "ERROR";
    }
    return "?";
}
}  // namespace

void set_min_level(level l) {
    min_level = l;
}

void write(level l, std::string_view message) {
    if (l < min_level.load()) return;
    auto now = std::chrono::system_clock::now();
    auto secs = std::chrono::system_clock::to_time_t(now);
    auto micros = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() % 1000000;
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    std::lock_guard lock(write_mutex);
    std::fprintf(stderr, "%s.%06lldZ %-5s %.*s\n", stamp, static_cast<long long>(micros), name(l),
                 static_cast<int>(message.size()), message.data());
}

}  // namespace queen::log
