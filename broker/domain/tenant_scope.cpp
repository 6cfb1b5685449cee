#include "domain/tenant_scope.hpp"

#include "util/utf8.hpp"

namespace queen::domain {

std::string tenant_name_problem(std::string_view tenant) {
    if (tenant.empty()) return "is empty";
    if (tenant.size() > max_tenant_bytes) return "is longer than " + std::to_string(max_tenant_bytes) + " bytes";
    for (const unsigned char c : tenant)
        if (c < 0x20 || c == 0x7f) return "holds a control character";
    // Stored keys are text in PostgreSQL, which refuses what is not UTF-8.
    if (util::first_invalid_utf8(tenant)) return "is not valid UTF-8";
    return {};
}

tenant_scope::tenant_scope(std::string tenant, bool is_default)
    : on_(true), is_default_(is_default), tenant_(std::move(tenant)) {}

std::optional<std::string> tenant_scope::key(std::string_view name) const {
    if (!on_) return std::string(name);
    if (name.find(tenant_separator) != std::string_view::npos) return std::nullopt;
    if (is_default_) return std::string(name);
    std::string out;
    out.reserve(tenant_.size() + 1 + name.size());
    out += tenant_;
    out += tenant_separator;
    out += name;
    return out;
}

std::string_view tenant_scope::local(std::string_view key) const noexcept {
    if (!on_ || is_default_) return key;
    const auto cut = key.find(tenant_separator);
    return cut == std::string_view::npos ? key : key.substr(cut + 1);
}

std::optional<std::string> tenant_scope::sql_scope() const {
    if (!on_) return std::nullopt;
    return is_default_ ? std::string() : tenant_;
}

}  // namespace queen::domain
