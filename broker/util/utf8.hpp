#pragma once
// UTF-8 as this broker reads and echoes it: one validator (RFC 3629: no overlong forms, no
// encoded surrogates, nothing above U+10FFFF) for request bodies, URL values and token
// fields, and one way to echo client text into answers and logs.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace queen::util {

// Length of the well-formed UTF-8 sequence starting at text[at] (1 for ASCII), or 0 when the
// bytes there are not one.
std::size_t utf8_sequence_length(std::string_view text, std::size_t at) noexcept;

// The byte offset of the first byte that does not start a well-formed sequence; nullopt when
// the whole text is valid UTF-8.
std::optional<std::size_t> first_invalid_utf8(std::string_view text) noexcept;

// Client text made safe to echo: valid UTF-8 kept, each invalid byte replaced by U+FFFD,
// control characters (below 0x20 and 0x7F) written as \xNN, and cut on a character boundary
// so that the result (before an appended "…") is at most max_bytes long.
std::string printable_echo(std::string_view text, std::size_t max_bytes);

}  // namespace queen::util
