#pragma once
// Pushes sent to the spool instead of PostgreSQL (docs/maintenance-and-spool.md): during
// push maintenance, while spooled pushes wait, or when the database is lost mid-push.
#include "api/shared/broker_context.hpp"
#include "domain/push_item.hpp"
#include "http/types.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <vector>

namespace queen::api {

// True when a push must go to the spool without trying PostgreSQL: push maintenance is on,
// or this broker's spool still holds records (new pushes must not overtake them).
bool push_goes_to_spool(const broker_context& ctx);

// Appends the items (one request) to the spool, fsync'd, and answers 201 with one
// {index, transaction_id, status:"buffered", message_id:null, trace_id, queueName} per item.
// `in_doubt`: a direct attempt failed with a lost connection, so it may have committed.
// Items name stored queue keys, which the spool keeps; answers name them as `scope`'s tenant
// knows them. 503 with Retry-After when the spool cannot take them (disk error,
// QUEEN_SPOOL_MAX_BYTES).
boost::asio::awaitable<http::response> spool_push(broker_context& ctx, const std::vector<domain::push_item>& items,
                                                  std::int64_t accepted_at_us, bool in_doubt,
                                                  const domain::tenant_scope& scope);

}  // namespace queen::api
