#include "auth/jwt_algorithm.hpp"

#include <array>

namespace queen::auth {

namespace {

struct algorithm_row {
    jwt_algorithm alg;
    std::string_view name;
    key_kind kind;
    const char* digest;
};

constexpr std::array algorithms{
    algorithm_row{jwt_algorithm::hs256, "HS256", key_kind::hmac_secret, "SHA256"},
    algorithm_row{jwt_algorithm::hs384, "HS384", key_kind::hmac_secret, "SHA384"},
    algorithm_row{jwt_algorithm::hs512, "HS512", key_kind::hmac_secret, "SHA512"},
    algorithm_row{jwt_algorithm::rs256, "RS256", key_kind::rsa, "SHA256"},
    algorithm_row{jwt_algorithm::rs384, "RS384", key_kind::rsa, "SHA384"},
    algorithm_row{jwt_algorithm::rs512, "RS512", key_kind::rsa, "SHA512"},
    algorithm_row{jwt_algorithm::es256, "ES256", key_kind::ec_p256, "SHA256"},
    algorithm_row{jwt_algorithm::es384, "ES384", key_kind::ec_p384, "SHA384"},
    algorithm_row{jwt_algorithm::eddsa, "EdDSA", key_kind::ed25519, nullptr},
};

const algorithm_row& row_of(jwt_algorithm alg) noexcept {
    for (const auto& r : algorithms)
        if (r.alg == alg) return r;
    return algorithms.front();
}

}  // namespace

std::optional<jwt_algorithm> algorithm_from_name(std::string_view name) noexcept {
    for (const auto& r : algorithms)
        if (r.name == name) return r.alg;
    return std::nullopt;
}

std::string_view name_of(jwt_algorithm alg) noexcept {
    return row_of(alg).name;
}
key_kind key_kind_of(jwt_algorithm alg) noexcept {
    return row_of(alg).kind;
}
const char* digest_name_of(jwt_algorithm alg) noexcept {
    return row_of(alg).digest;
}

std::string_view describe(key_kind kind) noexcept {
    switch (kind) {
        case key_kind::hmac_secret:
            return "a secret (JWT_SECRET)";
        case key_kind::rsa:
            return "an RSA key";
        case key_kind::ec_p256:
            return "an EC P-256 key";
        case key_kind::ec_p384:
            return "an EC P-384 key";
        case key_kind::ed25519:
            return "an Ed25519 key";
    }
    return "a key";
}

std::string_view algorithm_names() noexcept {
    return "HS256, HS384, HS512, RS256, RS384, RS512, ES256, ES384, EdDSA";
}

}  // namespace queen::auth
