// The operator's listing routes (docs/operator-routes.md): GET /api/v1/resources/queues,
// /resources/queues/:queue, /resources/namespaces, /resources/tasks, and POST
// /api/v1/stats/refresh. Lists read the stats snapshot (sql/procedures/68_stats.sql); one
// queue's detail is counted live. This file parses, calls store/resources_store, renders.
#include "api/admin/handlers.hpp"
#include "api/admin/resources_requests.hpp"
#include "api/shared/tenant_names.hpp"
#include "domain/message_id.hpp"
#include "http/responses.hpp"
#include "render/json_writer.hpp"
#include "store/resources_store.hpp"

namespace queen::api {

namespace asio = boost::asio;

namespace {

// Queen's spelling of an unset namespace or task.
std::string_view or_empty(const std::optional<std::string>& v) {
    return v ? std::string_view(*v) : std::string_view();
}

// {total, pending, processing, completed, failed, deadLetter}; failed is always 0 (acks
// that fail leave no per-message state to count).
void write_six(render::json_writer& out, const store::message_counts& c) {
    out.begin_object()
        .field("total", c.total)
        .field("pending", c.pending)
        .field("processing", c.processing)
        .field("completed", c.completed)
        .field("failed", 0)
        .field("deadLetter", c.dead_letter)
        .end_object();
}

void add(store::message_counts& sum, const store::message_counts& c) {
    sum.total += c.total;
    sum.pending += c.pending;
    sum.processing += c.processing;
    sum.completed += c.completed;
    sum.dead_letter += c.dead_letter;
}

asio::awaitable<http::response> groupings_answer(broker_context& ctx, store::grouping_kind kind,
                                                 const std::optional<std::string>& scope) {
    const auto rows = co_await store::list_groupings(ctx.pool, kind, scope);
    const bool task = kind == store::grouping_kind::task;
    render::json_writer out;
    out.begin_object().key(task ? render::member_name("tasks") : render::member_name("namespaces")).begin_array();
    for (const auto& g : rows) {
        out.begin_object();
        out.field(task ? render::member_name("task") : render::member_name("namespace"), g.name);
        out.field("name", g.name)
            .field("queues", g.queues)
            .field("queueCount", g.queues)
            .field("partitions", g.partitions)
            .key("messages")
            .begin_object()
            .field("total", g.total)
            .field("pending", g.pending)
            .end_object()
            .end_object();
    }
    out.end_array().end_object();
    co_return http::json_text(http::bhttp::status::ok, out.take());
}

}  // namespace

// GET /api/v1/resources/queues?namespace=&task=&limit=10000&offset=0
asio::awaitable<http::response> handle_list_queues(broker_context& ctx, http::request_context& rc) {
    const auto req = parse_queue_listing(rc.query, ctx.limits);
    const auto listing = co_await store::list_queues(ctx.pool, req.namespace_name, req.task, req.limit, req.offset,
                                                     rc.tenant.sql_scope());
    render::json_writer out;
    out.begin_object().key("queues").begin_array();
    for (const auto& q : listing.queues) {
        // Queen's list reports pending without what is processing: this broker's pending (ready)
        // already excludes the leased part, so it is the same pending as every other route's.
        out.begin_object()
            .field("id", std::to_string(q.id))
            .field("name", q.name)
            .field("namespace", or_empty(q.namespace_name))
            .field("task", or_empty(q.task))
            .field("createdAt", domain::iso_time(q.created_at_us))
            .field("partitions", q.partitions)
            .key("messages")
            .begin_object()
            .field("total", q.counts.total)
            .field("pending", q.counts.pending)
            .field("processing", q.counts.processing)
            .end_object()
            .end_object();
    }
    out.end_array().field("total", listing.total).field("statsAge", listing.stats_age).end_object();
    co_return http::json_text(http::bhttp::status::ok, out.take());
}

// GET /api/v1/resources/queues/:queue: its partitions by name, counted now.
asio::awaitable<http::response> handle_get_queue(broker_context& ctx, http::request_context& rc) {
    const std::string& queue = rc.path_params.at(0);
    check_name("queue", queue, ctx.limits);
    const auto detail = co_await store::read_queue_detail(ctx.pool, queue_key(rc.tenant, queue, "queue"));
    if (!detail) throw api_error(error_code::not_found, "Queue not found");
    store::message_counts totals;
    render::json_writer out;
    out.begin_object()
        .field("id", std::to_string(detail->id))
        .field("name", rc.tenant.local(detail->name))
        .field("namespace", or_empty(detail->namespace_name))
        .field("task", or_empty(detail->task))
        .field("createdAt", domain::iso_time(detail->created_at_us))
        .key("partitions")
        .begin_array();
    for (const auto& p : detail->partitions) {
        add(totals, p.counts);
        out.begin_object()
            .field("id", std::to_string(p.id))
            .field("name", p.name)
            .field("createdAt", domain::iso_time(p.created_at_us))
            .key("stats");
        write_six(out, p.counts);
        out.field("oldestMessage", domain::iso_time(p.oldest_waiting_at_us))
            .field("newestMessage", domain::iso_time(p.newest_at_us))
            .end_object();
    }
    out.end_array().key("totals");
    write_six(out, totals);
    out.end_object();
    co_return http::json_text(http::bhttp::status::ok, out.take());
}

// GET /api/v1/resources/namespaces
asio::awaitable<http::response> handle_list_namespaces(broker_context& ctx, http::request_context& rc) {
    co_return co_await groupings_answer(ctx, store::grouping_kind::namespace_name, rc.tenant.sql_scope());
}

// GET /api/v1/resources/tasks
asio::awaitable<http::response> handle_list_tasks(broker_context& ctx, http::request_context& rc) {
    co_return co_await groupings_answer(ctx, store::grouping_kind::task, rc.tenant.sql_scope());
}

// POST /api/v1/stats/refresh (the body is ignored): a new snapshot now.
asio::awaitable<http::response> handle_refresh_stats(broker_context& ctx, http::request_context&) {
    const auto r = co_await store::refresh_stats(ctx.pool, ctx.config.per_tenant.max_bytes > 0);
    render::json_writer out;
    out.begin_object().field("success", true);
    if (r.skipped)
        out.field("skipped", true).field("reason", "another_instance_running");
    else
        out.field("refreshedAt", domain::iso_time(r.taken_at_us))
            .field("durationMs", r.duration_ms)
            .field("partitions", r.partitions)
            .field("queues", r.queues);
    out.end_object();
    co_return http::json_text(http::bhttp::status::ok, out.take());
}

}  // namespace queen::api
