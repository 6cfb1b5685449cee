#include "auth/verification_key.hpp"

#include "auth/base64url.hpp"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <nlohmann/json.hpp>

#include <climits>
#include <cstring>
#include <stdexcept>

namespace queen::auth {

namespace {

struct bio_deleter {
    void operator()(BIO* b) const noexcept { BIO_free(b); }
};
struct md_ctx_deleter {
    void operator()(EVP_MD_CTX* c) const noexcept { EVP_MD_CTX_free(c); }
};
struct pkey_ctx_deleter {
    void operator()(EVP_PKEY_CTX* c) const noexcept { EVP_PKEY_CTX_free(c); }
};
struct bn_deleter {
    void operator()(BIGNUM* b) const noexcept { BN_free(b); }
};
struct param_bld_deleter {
    void operator()(OSSL_PARAM_BLD* b) const noexcept { OSSL_PARAM_BLD_free(b); }
};
struct param_deleter {
    void operator()(OSSL_PARAM* p) const noexcept { OSSL_PARAM_free(p); }
};
struct ecdsa_sig_deleter {
    void operator()(ECDSA_SIG* s) const noexcept { ECDSA_SIG_free(s); }
};
struct openssl_bytes_deleter {
    void operator()(unsigned char* p) const noexcept { OPENSSL_free(p); }
};
using bn_ptr = std::unique_ptr<BIGNUM, bn_deleter>;

// RSA keys below this size are refused (NIST SP 800-131A).
constexpr int min_rsa_bits = 2048;

const unsigned char* bytes(std::string_view s) {
    return reinterpret_cast<const unsigned char*>(s.data());
}

// The kind of a loaded key, or nullopt for a kind this broker does not verify with.
std::optional<key_kind> kind_of(EVP_PKEY* key) {
    switch (EVP_PKEY_get_base_id(key)) {
        case EVP_PKEY_RSA:
            if (EVP_PKEY_get_bits(key) < min_rsa_bits) return std::nullopt;
            return key_kind::rsa;
        case EVP_PKEY_ED25519:
            return key_kind::ed25519;
        case EVP_PKEY_EC: {
            char group[64] = {};
            std::size_t len = 0;
            if (EVP_PKEY_get_group_name(key, group, sizeof group, &len) != 1) return std::nullopt;
            const std::string_view name(group, len);
            if (name == "prime256v1" || name == "P-256") return key_kind::ec_p256;
            if (name == "secp384r1" || name == "P-384") return key_kind::ec_p384;
            return std::nullopt;
        }
        default:
            return std::nullopt;
    }
}

// A member of a JWK that is a base64url string, decoded; nullopt when absent or malformed.
std::optional<std::string> jwk_bytes(const nlohmann::json& jwk, const char* name) {
    auto it = jwk.find(name);
    if (it == jwk.end() || !it->is_string()) return std::nullopt;
    return base64url_decode(it->get_ref<const std::string&>());
}

std::string jwk_text(const nlohmann::json& jwk, const char* name) {
    auto it = jwk.find(name);
    return it != jwk.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// EVP_PKEY_fromdata for a public key of `type` ("RSA", "EC") from the built parameters.
pkey_ptr key_from_params(const char* type, OSSL_PARAM_BLD* bld) {
    std::unique_ptr<OSSL_PARAM, param_deleter> params(OSSL_PARAM_BLD_to_param(bld));
    std::unique_ptr<EVP_PKEY_CTX, pkey_ctx_deleter> ctx(EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr));
    if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1) return nullptr;
    EVP_PKEY* key = nullptr;
    if (EVP_PKEY_fromdata(ctx.get(), &key, EVP_PKEY_PUBLIC_KEY, params.get()) != 1) return nullptr;
    return pkey_ptr(key);
}

pkey_ptr rsa_from_jwk(const nlohmann::json& jwk) {
    auto n = jwk_bytes(jwk, "n");
    auto e = jwk_bytes(jwk, "e");
    if (!n || !e || n->empty() || e->empty() || n->size() > INT_MAX || e->size() > 8) return nullptr;
    bn_ptr bn_n(BN_bin2bn(bytes(*n), static_cast<int>(n->size()), nullptr));
    bn_ptr bn_e(BN_bin2bn(bytes(*e), static_cast<int>(e->size()), nullptr));
    std::unique_ptr<OSSL_PARAM_BLD, param_bld_deleter> bld(OSSL_PARAM_BLD_new());
    if (!bn_n || !bn_e || !bld || OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_N, bn_n.get()) != 1 ||
        OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_E, bn_e.get()) != 1)
        return nullptr;
    return key_from_params("RSA", bld.get());
}

pkey_ptr ec_from_jwk(const nlohmann::json& jwk) {
    const std::string crv = jwk_text(jwk, "crv");
    const char* group = crv == "P-256" ? "prime256v1" : crv == "P-384" ? "secp384r1" : nullptr;
    const std::size_t coordinate = crv == "P-256" ? 32 : 48;
    auto x = jwk_bytes(jwk, "x");
    auto y = jwk_bytes(jwk, "y");
    if (!group || !x || !y || x->size() != coordinate || y->size() != coordinate) return nullptr;
    // The uncompressed point 04 || x || y; OpenSSL refuses a point off the curve.
    std::string point = "\x04" + *x + *y;
    std::unique_ptr<OSSL_PARAM_BLD, param_bld_deleter> bld(OSSL_PARAM_BLD_new());
    if (!bld || OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, group, 0) != 1 ||
        OSSL_PARAM_BLD_push_octet_string(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(), point.size()) != 1)
        return nullptr;
    return key_from_params("EC", bld.get());
}

pkey_ptr okp_from_jwk(const nlohmann::json& jwk) {
    auto x = jwk_bytes(jwk, "x");
    if (jwk_text(jwk, "crv") != "Ed25519" || !x || x->size() != 32) return nullptr;
    return pkey_ptr(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, bytes(*x), x->size()));
}

// A JWS ECDSA signature (r || s, each `half` bytes) as the DER that OpenSSL verifies.
std::optional<std::string> ecdsa_der(std::string_view signature, std::size_t half) {
    if (signature.size() != 2 * half) return std::nullopt;
    bn_ptr r(BN_bin2bn(bytes(signature), static_cast<int>(half), nullptr));
    bn_ptr s(BN_bin2bn(bytes(signature) + half, static_cast<int>(half), nullptr));
    std::unique_ptr<ECDSA_SIG, ecdsa_sig_deleter> sig(ECDSA_SIG_new());
    if (!r || !s || !sig || ECDSA_SIG_set0(sig.get(), r.get(), s.get()) != 1) return std::nullopt;
    r.release();  // owned by sig now
    s.release();
    unsigned char* der = nullptr;
    const int len = i2d_ECDSA_SIG(sig.get(), &der);
    if (len <= 0) return std::nullopt;
    std::unique_ptr<unsigned char, openssl_bytes_deleter> owned(der);
    return std::string(reinterpret_cast<const char*>(der), static_cast<std::size_t>(len));
}

}  // namespace

verification_key verification_key::from_pem(std::string_view pem) {
    if (pem.size() > INT_MAX) throw std::invalid_argument("JWT_PUBLIC_KEY is too long");
    std::unique_ptr<BIO, bio_deleter> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
    if (!bio) throw std::bad_alloc();
    pkey_ptr key(PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr));
    if (!key) throw std::invalid_argument("JWT_PUBLIC_KEY is not a PEM public key (-----BEGIN PUBLIC KEY-----)");
    auto kind = kind_of(key.get());
    if (!kind)
        throw std::invalid_argument(
            "JWT_PUBLIC_KEY must be an RSA key of at least 2048 bits, an EC P-256 or P-384 key, or an Ed25519 key");
    return verification_key(std::move(key), *kind);
}

std::optional<verification_key> verification_key::from_jwk(const nlohmann::json& jwk) {
    if (!jwk.is_object()) return std::nullopt;
    const std::string kty = jwk_text(jwk, "kty");
    pkey_ptr key = kty == "RSA"   ? rsa_from_jwk(jwk)
                   : kty == "EC"  ? ec_from_jwk(jwk)
                   : kty == "OKP" ? okp_from_jwk(jwk)
                                  : nullptr;
    if (!key) return std::nullopt;
    auto kind = kind_of(key.get());
    if (!kind) return std::nullopt;
    return verification_key(std::move(key), *kind);
}

bool verification_key::verifies(jwt_algorithm alg, std::string_view signing_input, std::string_view signature) const {
    if (key_kind_of(alg) != kind_) return false;
    std::string der;
    std::string_view checked = signature;
    if (kind_ == key_kind::ec_p256 || kind_ == key_kind::ec_p384) {
        auto converted = ecdsa_der(signature, kind_ == key_kind::ec_p256 ? 32 : 48);
        if (!converted) return false;
        der = std::move(*converted);
        checked = der;
    }
    std::unique_ptr<EVP_MD_CTX, md_ctx_deleter> ctx(EVP_MD_CTX_new());
    if (!ctx) throw std::bad_alloc();
    // RSA keys verify PKCS#1 v1.5 by default; EdDSA takes no digest.
    if (EVP_DigestVerifyInit_ex(ctx.get(), nullptr, digest_name_of(alg), nullptr, nullptr, key_.get(), nullptr) != 1)
        return false;
    return EVP_DigestVerify(ctx.get(), bytes(checked), checked.size(), bytes(signing_input), signing_input.size()) == 1;
}

bool hmac_verifies(jwt_algorithm alg, std::string_view secret, std::string_view signing_input,
                   std::string_view signature) {
    if (key_kind_of(alg) != key_kind::hmac_secret) return false;
    unsigned char mac[EVP_MAX_MD_SIZE];
    std::size_t mac_len = 0;
    if (!EVP_Q_mac(nullptr, "HMAC", nullptr, digest_name_of(alg), nullptr, secret.data(), secret.size(),
                   bytes(signing_input), signing_input.size(), mac, sizeof mac, &mac_len))
        return false;
    return mac_len == signature.size() && CRYPTO_memcmp(mac, signature.data(), mac_len) == 0;
}

}  // namespace queen::auth
