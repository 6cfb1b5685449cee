#pragma once
// The 201 body of a push: one answer per item, in request order (docs/http-api.md, push).
#include "domain/push_item.hpp"
#include "domain/tenant_scope.hpp"

#include <string>
#include <vector>

namespace queen::api {

// Answers for stored items: "queued" or "duplicate" from their outcomes. Items name stored
// queue keys; answers name the queues as `scope`'s tenant knows them.
std::string render_push_answers(const std::vector<domain::push_item>& items,
                                const std::vector<domain::push_outcome>& outcomes, const domain::tenant_scope& scope);

// Answers for items accepted into the spool: "buffered" (no message id exists yet).
std::string render_buffered_answers(const std::vector<domain::push_item>& items, const domain::tenant_scope& scope);

}  // namespace queen::api
