#include "auth/base64url.hpp"

#include <openssl/evp.h>

#include <climits>

namespace queen::auth {

std::optional<std::string> base64url_decode(std::string_view text) {
    if (text.size() % 4 == 1 || text.size() > INT_MAX / 2) return std::nullopt;
    std::string standard;
    standard.reserve(text.size() + 3);
    for (char c : text) {
        if (c == '-')
            standard += '+';
        else if (c == '_')
            standard += '/';
        else if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
            standard += c;
        else
            return std::nullopt;
    }
    const std::size_t padding = (4 - standard.size() % 4) % 4;
    standard.append(padding, '=');
    std::string out(standard.size() / 4 * 3, '\0');
    const int n =
        EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                        reinterpret_cast<const unsigned char*>(standard.data()), static_cast<int>(standard.size()));
    if (n < 0) return std::nullopt;
    // EVP_DecodeBlock counts the padding as zero bytes.
    out.resize(static_cast<std::size_t>(n) - padding);
    return out;
}

}  // namespace queen::auth
