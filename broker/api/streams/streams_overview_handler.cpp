// The dashboard's view of stream queries (docs/streams.md, "The dashboard's view"):
// GET /api/v1/resources/streams. This file calls store/streams_overview_store and renders.
#include "api/streams/handlers.hpp"
#include "domain/message_id.hpp"
#include "http/responses.hpp"
#include "render/json_writer.hpp"
#include "store/streams_overview_store.hpp"

namespace queen::api {

namespace asio = boost::asio;

// GET /api/v1/resources/streams: every registered query by name, counted now.
asio::awaitable<http::response> handle_list_streams(broker_context& ctx, http::request_context& rc) {
    const auto rows = co_await store::list_stream_overviews(ctx.pool, rc.tenant.sql_scope());
    render::json_writer out;
    out.begin_object().key("streams").begin_array();
    for (const auto& s : rows) {
        out.begin_object()
            .field("name", s.name)
            .field("queryId", s.query_id)
            .field("sourceQueue", s.source_queue)
            .field("sinkQueue", s.sink_queue)
            .field("configHash", s.config_hash)
            .field("createdAt", domain::iso_time(s.created_at_us))
            .field("updatedAt", domain::iso_time(s.updated_at_us))
            .field("lanes", s.lanes)
            .field("stateRows", s.state_rows)
            .field("stateBytes", s.state_bytes)
            .field("sourceLag", s.source_lag)
            .field("sourceOldestPendingAt", domain::iso_time(s.oldest_pending_at_us))
            .field("sourceTimeLag", s.source_time_lag)
            .end_object();
    }
    out.end_array().end_object();
    co_return http::json_text(http::bhttp::status::ok, out.take());
}

}  // namespace queen::api
