#pragma once
// Acks by transaction id whose message sits in a segment the database cannot decode: zstd
// segments written with queen_ext, which was dropped since (docs/architecture.md, the codec layer).
// queen.find_in_span then raises SQLSTATE QNDEC; the broker, which decodes zstd itself,
// finds those offsets in the group's live spans and calls again with them.
#include "api/requests.hpp"
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

}  // namespace queen::api
