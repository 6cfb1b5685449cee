// libFuzzer harness for the token parsers: any Authorization header value must end in a
// verdict (a principal or an auth_failure), and any text in a key set or nothing, never in
// another exception, a crash or a hang. An input without a valid HMAC is never admitted.
#include "auth/jws_token.hpp"
#include "auth/key_set.hpp"
#include "auth/token_verifier.hpp"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

namespace {

using namespace queen;

const auth::token_verifier& verifier() {
    static const auth::token_verifier v([] {
        auth::auth_config c;
        c.enabled = true;
        c.algorithm = "auto";
        c.secret = "fuzz-secret-fuzz-secret-fuzz-secret";
        c.jwks_file = "/unused";  // the set is handed in below
        c.issuer = "iss";
        c.audience = "aud";
        return c;
    }());
    return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    static const auto jwks = auth::key_set::parse(R"({"keys":[{"kty":"OKP","crv":"Ed25519","kid":"k",
        "x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]})");
    const auto verdict = verifier().verify(auth::token_of_header(input), &jwks, std::chrono::system_clock::now());
    // The fuzzer cannot forge an HMAC or an Ed25519 signature.
    if (std::holds_alternative<auth::principal>(verdict)) __builtin_trap();
    try {
        const auto keys = auth::key_set::parse(input);
        (void)keys.size();
    } catch (const std::invalid_argument&) {
    }
    return 0;
}
