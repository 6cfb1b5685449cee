#pragma once
// Appending JSON text directly, for responses that embed stored payloads verbatim.
#include <cstdint>
#include <string>
#include <string_view>

namespace queen::api {

// Appends s as a JSON string literal (quoted, escaped).
void append_json_string(std::string& out, std::string_view s);

}  // namespace queen::api
