#include "domain/message_id.hpp"

#include <fmt/compile.h>
#include <fmt/core.h>

#include <charconv>
#include <ctime>

namespace queen::domain {

std::string message_id(std::int64_t partition_id, std::int64_t offset) {
    auto p = static_cast<std::uint64_t>(partition_id);
    auto o = static_cast<std::uint64_t>(offset);
    return fmt::format(FMT_COMPILE("{:08x}-{:04x}-{:04x}-{:04x}-{:04x}{:08x}"), p >> 32, (p >> 16) & 0xffff, p & 0xffff,
                       o >> 48, (o >> 32) & 0xffff, o & 0xffffffffULL);
}

std::optional<std::pair<std::int64_t, std::int64_t>> parse_message_id(std::string_view id) {
    if (id.size() != 36 || id[8] != '-' || id[13] != '-' || id[18] != '-' || id[23] != '-') return std::nullopt;
    std::string hex;
    for (char c : id) {
        if (c == '-') continue;
        if (!std::isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
        hex += c;
    }
    std::uint64_t p = 0, o = 0;
    std::from_chars(hex.data(), hex.data() + 16, p, 16);
    std::from_chars(hex.data() + 16, hex.data() + 32, o, 16);
    return std::pair{static_cast<std::int64_t>(p), static_cast<std::int64_t>(o)};
}

std::string iso_time(std::int64_t unix_micros) {
    std::int64_t secs = unix_micros / 1000000;
    std::int64_t micros = unix_micros % 1000000;
    if (micros < 0) {
        micros += 1000000;
        secs -= 1;
    }
    std::time_t t = static_cast<std::time_t>(secs);
    std::tm tm{};
    gmtime_r(&t, &tm);
    return fmt::format(FMT_COMPILE("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z"), tm.tm_year + 1900, tm.tm_mon + 1,
                       tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, micros);
}

std::optional<std::string> iso_time(const std::optional<std::int64_t>& unix_micros) {
    if (!unix_micros) return std::nullopt;
    return iso_time(*unix_micros);
}

namespace {
bool digits(std::string_view s, std::size_t pos, std::size_t n, int& out) {
    if (pos + n > s.size()) return false;
    int v = 0;
    for (std::size_t i = pos; i < pos + n; ++i) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (s[i] - '0');
    }
    out = v;
    return true;
}
}  // namespace

std::optional<std::int64_t> parse_iso_time(std::string_view s) {
    int year, month, day, hour = 0, minute = 0, second = 0;
    if (!digits(s, 0, 4, year) || s.size() < 10 || s[4] != '-' || !digits(s, 5, 2, month) || s[7] != '-' ||
        !digits(s, 8, 2, day))
        return std::nullopt;
    std::size_t pos = 10;
    std::int64_t micros = 0;
    if (pos < s.size() && (s[pos] == 'T' || s[pos] == 't' || s[pos] == ' ')) {
        if (!digits(s, pos + 1, 2, hour) || pos + 3 >= s.size() || s[pos + 3] != ':' || !digits(s, pos + 4, 2, minute))
            return std::nullopt;
        pos += 6;
        if (pos < s.size() && s[pos] == ':') {
            if (!digits(s, pos + 1, 2, second)) return std::nullopt;
            pos += 3;
            if (pos < s.size() && (s[pos] == '.' || s[pos] == ',')) {
                ++pos;
                int n = 0;
                std::int64_t frac = 0;
                while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
                    if (n < 6) {
                        frac = frac * 10 + (s[pos] - '0');
                        ++n;
                    }
                    ++pos;
                }
                if (n == 0) return std::nullopt;
                while (n < 6) {
                    frac *= 10;
                    ++n;
                }
                micros = frac;
            }
        }
    }
    std::int64_t offset_secs = 0;
    if (pos < s.size()) {
        if (s[pos] == 'Z' || s[pos] == 'z') {
            ++pos;
        } else if (s[pos] == '+' || s[pos] == '-') {
            int oh, om = 0;
            int sign = s[pos] == '-' ? -1 : 1;
            if (!digits(s, pos + 1, 2, oh)) return std::nullopt;
            pos += 3;
            if (pos < s.size() && s[pos] == ':') ++pos;
            if (pos < s.size()) {
                if (!digits(s, pos, 2, om)) return std::nullopt;
                pos += 2;
            }
            offset_secs = sign * (oh * 3600 + om * 60);
        } else {
            return std::nullopt;
        }
    }
    if (pos != s.size()) return std::nullopt;
    if (year < 1 || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59)
        return std::nullopt;
    std::tm tm{};
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = minute;
    tm.tm_sec = second;
    std::tm normalized = tm;
    std::int64_t secs = static_cast<std::int64_t>(timegm(&normalized)) - offset_secs;
    // timegm normalizes impossible dates (2026-02-30 → 2026-03-02): refuse them instead.
    if (normalized.tm_mday != day || normalized.tm_mon != month - 1 || normalized.tm_year != year - 1900)
        return std::nullopt;
    const std::int64_t unix_us = secs * 1000000 + micros;
    if (unix_us < earliest_time_us) return std::nullopt;
    return unix_us;
}

}  // namespace queen::domain
