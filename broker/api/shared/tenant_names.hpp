#pragma once
// Queue names of a request as the store keeps them (docs/tenancy.md): a tenant's queue `name`
// is stored under its key, and answers show the name again (domain::tenant_scope::local).
#include "domain/push_item.hpp"
#include "domain/tenant_scope.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace queen::api {

// The stored key of the caller's queue `name`; throws bad_request naming `what` when
// tenancy is on and the name holds U+001F (it would name another tenant's queue).
std::string queue_key(const domain::tenant_scope& scope, std::string_view name, const std::string& what);

// A stored key that may be absent, as the caller's tenant knows it.
std::optional<std::string> local_name(const std::optional<std::string>& key, const domain::tenant_scope& scope);

// Every item's queue replaced by its stored key (queue_key, `what` as items[i].queue).
void key_queue_names(std::vector<domain::push_item>& items, const domain::tenant_scope& scope);

}  // namespace queen::api
