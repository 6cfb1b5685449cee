#pragma once
// Big-endian integers in byte buffers: the one copy for the spool's files and records and
// PostgreSQL's binary results (the segment codec has its own, in C, shared with the extension).
#include <cstddef>
#include <cstdint>
#include <string>

namespace queen::util {

// The n-byte (n <= 8) big-endian unsigned integer at p.
inline std::uint64_t load_be(const char* p, std::size_t n) noexcept {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<std::uint8_t>(p[i]);
    return v;
}
inline std::uint32_t load_be32(const char* p) noexcept {
    return static_cast<std::uint32_t>(load_be(p, 4));
}
inline std::uint64_t load_be64(const char* p) noexcept {
    return load_be(p, 8);
}

// Writes the low n bytes of v at p, most significant first.
inline void store_be(char* p, std::uint64_t v, std::size_t n) noexcept {
    for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<char>(v >> (8 * (n - 1 - i)));
}
inline void store_be32(char* p, std::uint32_t v) noexcept {
    store_be(p, v, 4);
}
inline void store_be64(char* p, std::uint64_t v) noexcept {
    store_be(p, v, 8);
}

// Appends the low n bytes of v, most significant first.
inline void append_be(std::string& out, std::uint64_t v, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) out.push_back(static_cast<char>(v >> (8 * (n - 1 - i))));
}

}  // namespace queen::util
