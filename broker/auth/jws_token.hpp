#pragma once
// A compact JWS (header.payload.signature) split and decoded, before any check of its
// signature or claims. Shared by the verifier and the fuzz target.
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace queen::auth {

struct jws_token {
    nlohmann::json header;           // a JSON object
    std::string_view payload_b64;    // decoded only after the signature holds
    std::string_view signing_input;  // "header.payload", what the signature covers
    std::string signature;           // decoded bytes
};

// Longest token accepted, in bytes.
inline constexpr std::size_t max_token_bytes = 16 * 1024;

// The parts of `token` (which must outlive the result), or nullopt when it is not three
// base64url parts, the header is not a shallow JSON object, or it is longer than
// max_token_bytes.
std::optional<jws_token> split_token(std::string_view token);

// A base64url part decoded and parsed as a shallow JSON object, or nullopt.
std::optional<nlohmann::json> decode_json_part(std::string_view part);

// The token of an Authorization header: after a case-insensitive "Bearer " prefix, or the
// whole value without one; surrounding blanks removed.
std::string_view token_of_header(std::string_view authorization);

}  // namespace queen::auth
