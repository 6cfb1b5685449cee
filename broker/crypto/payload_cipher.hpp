#pragma once
// Encryption at rest of message payloads (queues with encryptionEnabled, when the broker has
// QUEEN_ENCRYPTION_KEY): AES-256-GCM through OpenSSL. A sealed payload is stored as the JSON
// text {"$queenEncrypted":"v1.<base64 of iv(12) | ciphertext | tag(16)>"}, with the queue name
// as additional authenticated data (docs/segment-format.md, "Encrypted payloads").
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace queen::crypto {

class payload_cipher {
public:
    // From 64 hex characters (32 bytes); nullopt when malformed.
    static std::optional<payload_cipher> from_hex_key(std::string_view hex);

    // The sealed form of a JSON payload for a queue.
    std::string seal(std::string_view payload, std::string_view queue) const;
    // The JSON payload of a sealed one; nullopt when it does not authenticate (wrong key,
    // other queue, altered bytes) or is malformed.
    std::optional<std::string> open(std::string_view sealed, std::string_view queue) const;

    // Whether a stored payload is in the sealed form.
    static bool is_sealed(std::string_view payload);

private:
    std::array<std::uint8_t, 32> key_{};
};

}  // namespace queen::crypto
