#pragma once
// Test keys and tokens made with OpenSSL: RSA, EC P-256/P-384 and Ed25519 key pairs, their
// public halves as PEM and as JWK, and signed JWTs. Header-only so that the unit and the
// integration suite share it.
#include <nlohmann/json.hpp>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

namespace queen::test::jwt {

struct pkey_free {
    void operator()(EVP_PKEY* k) const noexcept { EVP_PKEY_free(k); }
};
using pkey = std::shared_ptr<EVP_PKEY>;

inline std::string b64url(std::string_view bytes) {
    std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
    const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                  reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
    out.resize(static_cast<std::size_t>(n));
    while (!out.empty() && out.back() == '=') out.pop_back();
    for (auto& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
    return out;
}

// "RSA" (2048 bits), "P-256", "P-384" or "Ed25519".
inline pkey generate(const std::string& kind) {
    EVP_PKEY* k = nullptr;
    if (kind == "RSA") k = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<size_t>(2048));
    else if (kind == "P-256") k = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
    else if (kind == "P-384") k = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-384");
    else if (kind == "Ed25519") k = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
    if (!k) throw std::runtime_error("key generation failed: " + kind);
    return pkey(k, pkey_free{});
}

inline std::string public_pem(const pkey& key) {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
    PEM_write_bio_PUBKEY(bio.get(), key.get());
    char* data = nullptr;
    const long len = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<std::size_t>(len));
}

inline std::string bn_param(const pkey& key, const char* name, int pad = 0) {
    BIGNUM* bn = nullptr;
    if (EVP_PKEY_get_bn_param(key.get(), name, &bn) != 1) throw std::runtime_error(name);
    std::string out(static_cast<std::size_t>(pad ? pad : BN_num_bytes(bn)), '\0');
    BN_bn2binpad(bn, reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(out.size()));
    BN_free(bn);
    return out;
}

// The public JWK of key, with kid (and alg when given).
inline nlohmann::json public_jwk(const pkey& key, const std::string& kid, const std::string& alg = "") {
    nlohmann::json j;
    switch (EVP_PKEY_get_base_id(key.get())) {
        case EVP_PKEY_RSA:
            j = {{"kty", "RSA"}, {"n", b64url(bn_param(key, OSSL_PKEY_PARAM_RSA_N))},
                 {"e", b64url(bn_param(key, OSSL_PKEY_PARAM_RSA_E))}};
            break;
        case EVP_PKEY_EC: {
            const int bits = EVP_PKEY_get_bits(key.get());
            const int size = (bits + 7) / 8;
            j = {{"kty", "EC"}, {"crv", bits == 256 ? "P-256" : "P-384"},
                 {"x", b64url(bn_param(key, OSSL_PKEY_PARAM_EC_PUB_X, size))},
                 {"y", b64url(bn_param(key, OSSL_PKEY_PARAM_EC_PUB_Y, size))}};
            break;
        }
        default: {
            unsigned char raw[32];
            std::size_t len = sizeof raw;
            EVP_PKEY_get_raw_public_key(key.get(), raw, &len);
            j = {{"kty", "OKP"}, {"crv", "Ed25519"}, {"x", b64url(std::string(reinterpret_cast<char*>(raw), len))}};
        }
    }
    j["kid"] = kid;
    j["use"] = "sig";
    if (!alg.empty()) j["alg"] = alg;
    return j;
}

inline std::string jwks_of(const std::vector<nlohmann::json>& keys) { return nlohmann::json{{"keys", keys}}.dump(); }

inline const char* digest_of(const std::string& alg) {
    if (alg == "EdDSA") return nullptr;
    if (alg.size() == 5 && alg.substr(2) == "384") return "SHA384";
    if (alg.size() == 5 && alg.substr(2) == "512") return "SHA512";
    return "SHA256";
}

// The JWS signature of input: HMAC for HS*, else with key (ECDSA as r||s).
inline std::string sign(const std::string& alg, const std::string& input, const pkey& key, const std::string& secret) {
    const auto* data = reinterpret_cast<const unsigned char*>(input.data());
    if (alg.rfind("HS", 0) == 0) {
        unsigned char mac[EVP_MAX_MD_SIZE];
        std::size_t len = 0;
        EVP_Q_mac(nullptr, "HMAC", nullptr, digest_of(alg), nullptr, secret.data(), secret.size(), data, input.size(),
                  mac, sizeof mac, &len);
        return std::string(reinterpret_cast<char*>(mac), len);
    }
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    EVP_DigestSignInit_ex(ctx.get(), nullptr, digest_of(alg), nullptr, nullptr, key.get(), nullptr);
    std::size_t len = 0;
    EVP_DigestSign(ctx.get(), nullptr, &len, data, input.size());
    std::string sig(len, '\0');
    EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len, data, input.size());
    sig.resize(len);
    if (alg.rfind("ES", 0) != 0) return sig;
    const auto* der = reinterpret_cast<const unsigned char*>(sig.data());
    ECDSA_SIG* parsed = d2i_ECDSA_SIG(nullptr, &der, static_cast<long>(sig.size()));
    const int half = alg == "ES256" ? 32 : 48;
    std::string raw(static_cast<std::size_t>(2 * half), '\0');
    BN_bn2binpad(ECDSA_SIG_get0_r(parsed), reinterpret_cast<unsigned char*>(raw.data()), half);
    BN_bn2binpad(ECDSA_SIG_get0_s(parsed), reinterpret_cast<unsigned char*>(raw.data()) + half, half);
    ECDSA_SIG_free(parsed);
    return raw;
}

inline long long now_s() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// A signed token: header {alg, typ, kid?} and the given claims.
inline std::string token(const std::string& alg, const nlohmann::json& claims, const pkey& key = nullptr,
                         const std::string& secret = "", const std::string& kid = "") {
    nlohmann::json header{{"alg", alg}, {"typ", "JWT"}};
    if (!kid.empty()) header["kid"] = kid;
    const std::string input = b64url(header.dump()) + "." + b64url(claims.dump());
    return input + "." + b64url(sign(alg, input, key, secret));
}

// Claims valid now for an hour, with sub and role.
inline nlohmann::json claims(const std::string& sub, const std::string& role) {
    nlohmann::json c{{"sub", sub}, {"iat", now_s()}, {"exp", now_s() + 3600}};
    if (!role.empty()) c["role"] = role;
    return c;
}

}  // namespace queen::test::jwt
