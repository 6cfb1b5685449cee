#pragma once
// The JWS algorithms this broker verifies, the key each one needs, and their names: the one
// table behind JWT_ALGORITHM, the token header's "alg" and a JWK's "alg".
#include <optional>
#include <string_view>

namespace queen::auth {

enum class jwt_algorithm { hs256, hs384, hs512, rs256, rs384, rs512, es256, es384, eddsa };

// The kind of key an algorithm verifies with; a key of another kind never verifies it.
enum class key_kind { hmac_secret, rsa, ec_p256, ec_p384, ed25519 };

// "HS256" ... "EdDSA" (case-sensitive, as JWS spells them); nullopt for anything else, "none" included.
std::optional<jwt_algorithm> algorithm_from_name(std::string_view name) noexcept;
std::string_view name_of(jwt_algorithm alg) noexcept;
key_kind key_kind_of(jwt_algorithm alg) noexcept;
// "SHA256", "SHA384", "SHA512", or nullptr for EdDSA (which hashes internally).
const char* digest_name_of(jwt_algorithm alg) noexcept;
// "an RSA key", "an EC P-256 key", ...: for messages.
std::string_view describe(key_kind kind) noexcept;
// The names, comma-separated, for a configuration error.
std::string_view algorithm_names() noexcept;

}  // namespace queen::auth
