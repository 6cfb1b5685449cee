#include "store/streams_overview_store.hpp"

#include "db/pg_binary.hpp"

namespace queen::store {

boost::asio::awaitable<std::vector<stream_overview>> list_stream_overviews(db::pg_pool& pool,
                                                                           const std::optional<std::string>& scope) {
    const std::vector<db::pg_param> params{scope ? db::pg_param::text(*scope) : db::pg_param::null()};
    auto res = co_await pool.exec(
        "SELECT name, query_id::text, source_queue, sink_queue, config_hash, created_at, updated_at, lanes, "
        "state_rows, state_bytes, source_lag, oldest_pending_at, source_time_lag "
        "FROM queen.stream_queries_overview($1)",
        params, db::result_format::binary);
    std::vector<stream_overview> out;
    out.reserve(static_cast<std::size_t>(res.rows()));
    for (int row = 0; row < res.rows(); ++row) {
        stream_overview s;
        s.name = std::string(res.text(row, 0));
        s.query_id = std::string(res.text(row, 1));
        s.source_queue = std::string(res.text(row, 2));
        s.sink_queue = db::opt_text(res, row, 3);
        s.config_hash = std::string(res.text(row, 4));
        s.created_at_us = db::timestamp_us(res, row, 5);
        s.updated_at_us = db::timestamp_us(res, row, 6);
        s.lanes = res.int64(row, 7);
        s.state_rows = res.int64(row, 8);
        s.state_bytes = res.int64(row, 9);
        s.source_lag = res.int64(row, 10);
        s.oldest_pending_at_us = db::opt_timestamp_us(res, row, 11);
        s.source_time_lag = res.int64(row, 12);
        out.push_back(std::move(s));
    }
    co_return out;
}

}  // namespace queen::store
