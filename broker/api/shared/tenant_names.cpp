#include "api/shared/tenant_names.hpp"

#include "api/shared/api_error.hpp"

namespace queen::api {

std::string queue_key(const domain::tenant_scope& scope, std::string_view name, const std::string& what) {
    auto key = scope.key(name);
    if (!key) throw bad_request(what + " must not hold the character U+001F while tenancy is on");
    return std::move(*key);
}

std::optional<std::string> local_name(const std::optional<std::string>& key, const domain::tenant_scope& scope) {
    if (!key) return std::nullopt;
    return std::string(scope.local(*key));
}

void key_queue_names(std::vector<domain::push_item>& items, const domain::tenant_scope& scope) {
    if (!scope.tenancy_on()) return;
    for (std::size_t i = 0; i < items.size(); ++i)
        items[i].queue = queue_key(scope, items[i].queue, "items[" + std::to_string(i) + "].queue");
}

}  // namespace queen::api
