#pragma once
// Acks by transaction id whose message sits in a segment the database cannot decode: zstd
// segments written with queen_ext, which was dropped since (docs/architecture.md, the codec layer).
// queen.find_in_span then raises SQLSTATE QNDEC; the broker, which decodes zstd itself,
// finds those offsets in the group's live spans and calls again with them.
#include "api/shared/requests.hpp"
#include "db/pg_error.hpp"
#include "db/pg_pool.hpp"

#include <utility>
#include <boost/asio/awaitable.hpp>

#include <string_view>
#include <vector>

namespace queen::api {

// The SQLSTATE of queen.find_in_span for a span it cannot search.
inline constexpr std::string_view undecodable_span_sqlstate = "QNDEC";

// Sets the offset of every ack without one whose transaction id is found in a zstd segment of
// its group's live span (committed, lease_end] (the lowest such offset, as the database
// would choose). Acks it cannot place keep no offset and resolve as before. `acks` point
// into the caller's request; partition ids that are not positive numbers are skipped.
boost::asio::awaitable<void> resolve_offsets_in_undecodable_spans(db::pg_pool& pool, std::vector<ack_item*> acks);

// The one rule for a store call that resolves acks (queen.ack, queen.transaction): runs
// attempt(); when the database cannot place one of `acks` by transaction id (QNDEC), finds
// their offsets with the broker's decoder and runs attempt() once more. Any other failure,
// and QNDEC on the second attempt, propagates. `attempt` is kept by value for the whole call.
template <class Attempt>
auto with_undecodable_spans_resolved(db::pg_pool& pool, std::vector<ack_item*> acks, Attempt attempt)
    -> decltype(attempt()) {
    try {
        co_return co_await attempt();
    } catch (const db::pg_error& e) {
        if (e.sqlstate() != undecodable_span_sqlstate) throw;
    }
    co_await resolve_offsets_in_undecodable_spans(pool, std::move(acks));
    co_return co_await attempt();
}

}  // namespace queen::api
