#include "auth/key_set.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>

namespace queen::auth {

key_set key_set::parse(std::string_view json_text) {
    auto doc = nlohmann::json::parse(json_text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) throw std::invalid_argument("a JWKS document must be a JSON object");
    auto keys = doc.find("keys");
    if (keys == doc.end() || !keys->is_array())
        throw std::invalid_argument("a JWKS document must have a \"keys\" array");
    key_set out;
    for (const auto& jwk : *keys) {
        if (!jwk.is_object()) {
            ++out.skipped_;
            continue;
        }
        auto use = jwk.find("use");
        if (use != jwk.end() && *use != "sig") {
            ++out.skipped_;
            continue;
        }
        auto key = verification_key::from_jwk(jwk);
        if (!key) {
            ++out.skipped_;
            continue;
        }
        jwk_entry entry{std::nullopt, std::nullopt, std::move(*key)};
        if (auto kid = jwk.find("kid"); kid != jwk.end() && kid->is_string()) entry.kid = kid->get<std::string>();
        if (auto alg = jwk.find("alg"); alg != jwk.end()) {
            auto known = alg->is_string() ? algorithm_from_name(alg->get_ref<const std::string&>()) : std::nullopt;
            // A key pinned to an algorithm this broker does not know cannot verify anything here.
            if (!known || key_kind_of(*known) != entry.key.kind()) {
                ++out.skipped_;
                continue;
            }
            entry.alg = known;
        }
        out.keys_.push_back(std::move(entry));
    }
    return out;
}

std::vector<const verification_key*> key_set::candidates(jwt_algorithm alg,
                                                         const std::optional<std::string>& kid) const {
    std::vector<const verification_key*> out;
    for (const auto& e : keys_) {
        if (kid && e.kid != kid) continue;
        if (e.key.kind() != key_kind_of(alg) || (e.alg && *e.alg != alg)) continue;
        out.push_back(&e.key);
    }
    return out;
}

bool key_set::has_kid(const std::string& kid) const {
    for (const auto& e : keys_)
        if (e.kid == kid) return true;
    return false;
}

}  // namespace queen::auth
