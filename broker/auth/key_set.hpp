#pragma once
// A JWKS document's signature keys (RFC 7517), by "kid". Keys this broker cannot use (another
// kty or curve, "use" other than "sig", bad members) are left out and counted.
#include "auth/verification_key.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace queen::auth {

struct jwk_entry {
    std::optional<std::string> kid;
    std::optional<jwt_algorithm> alg;  // the JWK's "alg", when it names one
    verification_key key;
};

class key_set {
public:
    // Parses a JWKS document ({"keys": [...]}); throws std::invalid_argument when the text is
    // not one. A document whose keys are all unusable is a valid, empty set.
    static key_set parse(std::string_view json_text);

    // The keys that may verify a token of `alg` with `kid` (any kid when the token has none):
    // the key's kind fits alg and its "alg", when set, equals alg.
    std::vector<const verification_key*> candidates(jwt_algorithm alg, const std::optional<std::string>& kid) const;
    bool has_kid(const std::string& kid) const;
    std::size_t size() const noexcept { return keys_.size(); }
    std::size_t skipped() const noexcept { return skipped_; }

private:
    std::vector<jwk_entry> keys_;
    std::size_t skipped_ = 0;
};

}  // namespace queen::auth
