#pragma once
// base64url without padding (RFC 7515 section 2), decoded with OpenSSL's base64 decoder.
#include <optional>
#include <string>
#include <string_view>

namespace queen::auth {

// The bytes of an unpadded base64url text; nullopt for any character outside the alphabet
// ('=' included), or a length that no byte string encodes to.
std::optional<std::string> base64url_decode(std::string_view text);

}  // namespace queen::auth
