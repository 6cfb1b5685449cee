// AES-256-GCM sealing of payloads, without a database.
#include "crypto/payload_cipher.hpp"

#include <gtest/gtest.h>

namespace queen::crypto {
namespace {

const std::string key_hex(64, 'a');

TEST(PayloadCipher, SealOpenRoundTripBoundToTheQueue) {
    auto c = payload_cipher::from_hex_key(key_hex);
    ASSERT_TRUE(c);
    const std::string payload = R"({"card":"4111 1111 1111 1111","n":[1,2,3]})";
    auto sealed = c->seal(payload, "payments");
    EXPECT_TRUE(payload_cipher::is_sealed(sealed));
    EXPECT_EQ(sealed.find("4111"), std::string::npos);
    EXPECT_EQ(sealed.rfind(R"({"$queenEncrypted":"v1.)", 0), 0u);
    EXPECT_NE(c->seal(payload, "payments"), sealed) << "a fresh IV every time";
    EXPECT_EQ(*c->open(sealed, "payments"), payload);
    EXPECT_FALSE(c->open(sealed, "other-queue")) << "the queue is authenticated";
    auto other = payload_cipher::from_hex_key(std::string(64, 'b'));
    EXPECT_FALSE(other->open(sealed, "payments")) << "another key does not open it";
    std::string tampered = sealed;
    tampered[30] = tampered[30] == 'A' ? 'B' : 'A';
    EXPECT_FALSE(c->open(tampered, "payments"));
    EXPECT_EQ(*c->open(c->seal("", "q"), "q"), "");
}

TEST(PayloadCipher, KeysAndShapes) {
    EXPECT_FALSE(payload_cipher::from_hex_key("abc"));
    EXPECT_FALSE(payload_cipher::from_hex_key(std::string(63, 'a') + "g"));
    EXPECT_FALSE(payload_cipher::is_sealed(R"({"a":1})"));
    EXPECT_FALSE(payload_cipher::is_sealed(R"({"$queenEncrypted":"v1."})"));
    auto c = payload_cipher::from_hex_key(key_hex);
    EXPECT_FALSE(c->open(R"({"$queenEncrypted":"v1.!!!!"})", "q"));
}

}  // namespace
}  // namespace queen::crypto
