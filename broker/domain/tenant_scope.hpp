#pragma once
// Which tenant's queues a request may see (docs/tenancy.md). A queue of a named tenant is
// stored under the key `tenant US name` (US: the unit separator, U+001F); a queue without a
// tenant under its bare name. Same rule as queen.tenant_queue_key() in
// sql/procedures/21_tenancy.sql.
#include <optional>
#include <string>
#include <string_view>

namespace queen::domain {

// The byte between a tenant and a queue name in a stored key.
inline constexpr char tenant_separator = '\x1f';

// Longest tenant name in bytes.
inline constexpr std::size_t max_tenant_bytes = 128;

// Empty when `tenant` is a valid tenant name (1..max_tenant_bytes bytes of UTF-8, no control
// character), else what is wrong with it.
std::string tenant_name_problem(std::string_view tenant);

class tenant_scope {
public:
    // Tenancy off: names are stored keys, nothing is filtered.
    tenant_scope() = default;
    // Tenancy on, for `tenant`; `is_default` when it is QUEEN_TENANCY_DEFAULT, whose queues
    // are the ones stored without a tenant.
    tenant_scope(std::string tenant, bool is_default);

    bool tenancy_on() const noexcept { return on_; }
    // The tenant's name (tenancy on), or empty.
    const std::string& tenant() const noexcept { return tenant_; }

    // The stored key of this tenant's queue `name`. With tenancy on, a name holding the
    // separator is refused (nullopt): it would name another tenant's key.
    std::optional<std::string> key(std::string_view name) const;
    // The name this tenant knows a stored key of its own by.
    std::string_view local(std::string_view key) const noexcept;
    // The scope argument of the queen.* functions: NULL (tenancy off: every queue), "" (the
    // queues without a tenant) or the tenant's name.
    std::optional<std::string> sql_scope() const;

private:
    bool on_ = false;
    bool is_default_ = false;
    std::string tenant_;
};

}  // namespace queen::domain
