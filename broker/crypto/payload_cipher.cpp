#include "crypto/payload_cipher.hpp"

#include "util/hex_digit.hpp"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <memory>
#include <stdexcept>
#include <vector>

namespace queen::crypto {
namespace {

constexpr std::string_view prefix = R"({"$queenEncrypted":"v1.)";
constexpr std::string_view suffix = R"("})";
constexpr std::size_t iv_size = 12;
constexpr std::size_t tag_size = 16;

using ctx_ptr = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

ctx_ptr new_ctx() {
    ctx_ptr ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
    if (!ctx) throw std::runtime_error("EVP_CIPHER_CTX_new failed");
    return ctx;
}

std::string base64(const std::vector<std::uint8_t>& bytes) {
    std::string out(4 * ((bytes.size() + 2) / 3), '\0');
    int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes.data(), static_cast<int>(bytes.size()));
    out.resize(static_cast<std::size_t>(n));
    return out;
}

std::optional<std::vector<std::uint8_t>> unbase64(std::string_view text) {
    if (text.size() % 4 != 0) return std::nullopt;
    std::vector<std::uint8_t> out(text.size() / 4 * 3);
    int n =
        EVP_DecodeBlock(out.data(), reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
    if (n < 0) return std::nullopt;
    std::size_t padding = 0;
    if (!text.empty() && text.back() == '=') ++padding;
    if (text.size() > 1 && text[text.size() - 2] == '=') ++padding;
    out.resize(static_cast<std::size_t>(n) - padding);
    return out;
}

}  // namespace

std::optional<payload_cipher> payload_cipher::from_hex_key(std::string_view hex) {
    if (hex.size() != 64) return std::nullopt;
    payload_cipher c;
    for (std::size_t i = 0; i < 32; ++i) {
        int hi = util::hex_digit_value(hex[2 * i]), lo = util::hex_digit_value(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return std::nullopt;
        c.key_[i] = static_cast<std::uint8_t>(hi * 16 + lo);
    }
    return c;
}

bool payload_cipher::is_sealed(std::string_view payload) {
    return payload.size() > prefix.size() + suffix.size() && payload.substr(0, prefix.size()) == prefix &&
           payload.substr(payload.size() - suffix.size()) == suffix;
}

std::string payload_cipher::seal(std::string_view payload, std::string_view queue) const {
    std::vector<std::uint8_t> out(iv_size + payload.size() + tag_size);
    if (RAND_bytes(out.data(), static_cast<int>(iv_size)) != 1) throw std::runtime_error("RAND_bytes failed");
    auto ctx = new_ctx();
    int len = 0;
    if (EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(iv_size), nullptr) != 1 ||
        EVP_EncryptInit_ex(ctx.get(), nullptr, nullptr, key_.data(), out.data()) != 1 ||
        EVP_EncryptUpdate(ctx.get(), nullptr, &len, reinterpret_cast<const unsigned char*>(queue.data()),
                          static_cast<int>(queue.size())) != 1 ||
        EVP_EncryptUpdate(ctx.get(), out.data() + iv_size, &len, reinterpret_cast<const unsigned char*>(payload.data()),
                          static_cast<int>(payload.size())) != 1)
        throw std::runtime_error("AES-256-GCM encryption failed");
    int tail = 0;
    if (EVP_EncryptFinal_ex(ctx.get(), out.data() + iv_size + len, &tail) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(tag_size),
                            out.data() + iv_size + payload.size()) != 1)
        throw std::runtime_error("AES-256-GCM encryption failed");
    return std::string(prefix) + base64(out) + std::string(suffix);
}

std::optional<std::string> payload_cipher::open(std::string_view sealed, std::string_view queue) const {
    if (!is_sealed(sealed)) return std::nullopt;
    auto bytes = unbase64(sealed.substr(prefix.size(), sealed.size() - prefix.size() - suffix.size()));
    if (!bytes || bytes->size() < iv_size + tag_size) return std::nullopt;
    const std::size_t ct_size = bytes->size() - iv_size - tag_size;
    std::string out(ct_size, '\0');
    auto ctx = new_ctx();
    int len = 0;
    if (EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(iv_size), nullptr) != 1 ||
        EVP_DecryptInit_ex(ctx.get(), nullptr, nullptr, key_.data(), bytes->data()) != 1 ||
        EVP_DecryptUpdate(ctx.get(), nullptr, &len, reinterpret_cast<const unsigned char*>(queue.data()),
                          static_cast<int>(queue.size())) != 1 ||
        EVP_DecryptUpdate(ctx.get(), reinterpret_cast<unsigned char*>(out.data()), &len, bytes->data() + iv_size,
                          static_cast<int>(ct_size)) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, static_cast<int>(tag_size),
                            bytes->data() + iv_size + ct_size) != 1)
        return std::nullopt;
    int tail = 0;
    if (EVP_DecryptFinal_ex(ctx.get(), reinterpret_cast<unsigned char*>(out.data()) + len, &tail) != 1)
        return std::nullopt;
    return out;
}

}  // namespace queen::crypto
