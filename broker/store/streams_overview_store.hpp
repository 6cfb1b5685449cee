#pragma once
// Store layer (see store/queues_store.hpp): the dashboard's view of stream queries
// (sql/procedures/99_streams_overview.sql; docs/streams.md, "The dashboard's view").
#include "db/pg_pool.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace queen::store {

struct stream_overview {
    std::string name;
    std::string query_id;  // canonical UUID text
    std::string source_queue;
    std::optional<std::string> sink_queue;
    std::string config_hash;
    std::int64_t created_at_us = 0;
    std::int64_t updated_at_us = 0;
    std::int64_t lanes = 0;
    std::int64_t state_rows = 0;
    std::int64_t state_bytes = 0;                      // pg_column_size(value) + octet_length(key), summed
    std::int64_t source_lag = 0;                       // source messages the group streams.<name> has not committed
    std::optional<std::int64_t> oldest_pending_at_us;  // createdAt of the oldest of them
    std::int64_t source_time_lag = 0;                  // its age in seconds, 0 when none
};

// queen.stream_queries_overview: every registered stream query of the tenant `scope` (names as
// it shows them), by name, counted now.
boost::asio::awaitable<std::vector<stream_overview>> list_stream_overviews(db::pg_pool& pool,
                                                                           const std::optional<std::string>& scope);

}  // namespace queen::store
