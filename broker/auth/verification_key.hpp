#pragma once
// A public key that verifies JWS signatures (RS*, ES*, EdDSA), held in an OpenSSL EVP_PKEY,
// and the HMAC check of HS* tokens. Built from PEM or from a JWK; its kind is what OpenSSL
// says the key is, so a token's "alg" can never make a key verify as another kind.
#include "auth/jwt_algorithm.hpp"

#include <openssl/evp.h>
#include <nlohmann/json_fwd.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace queen::auth {

struct pkey_deleter {
    void operator()(EVP_PKEY* k) const noexcept { EVP_PKEY_free(k); }
};
using pkey_ptr = std::unique_ptr<EVP_PKEY, pkey_deleter>;

class verification_key {
public:
    // A PEM public key (SubjectPublicKeyInfo) of a supported kind; throws
    // std::invalid_argument naming what is wrong.
    static verification_key from_pem(std::string_view pem);
    // A JWK (kty RSA with n/e, EC with crv P-256/P-384 and x/y, OKP Ed25519 with x); nullopt
    // for a key of another kind or with bad members (the caller says which one it skipped).
    static std::optional<verification_key> from_jwk(const nlohmann::json& jwk);

    key_kind kind() const noexcept { return kind_; }
    // True when `signature` is the JWS signature of `signing_input` under alg; false also when
    // alg needs another kind of key. A JWS ECDSA signature is r||s, converted to DER here.
    bool verifies(jwt_algorithm alg, std::string_view signing_input, std::string_view signature) const;

private:
    verification_key(pkey_ptr key, key_kind kind) : key_(std::move(key)), kind_(kind) {}
    std::shared_ptr<EVP_PKEY> key_;
    key_kind kind_;
};

// The HS* check: HMAC of signing_input under secret, compared in constant time.
bool hmac_verifies(jwt_algorithm alg, std::string_view secret, std::string_view signing_input,
                   std::string_view signature);

}  // namespace queen::auth
