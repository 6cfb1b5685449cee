#include "metrics/activity_document.hpp"

#include "domain/message_id.hpp"
#include "render/json_writer.hpp"

namespace queen::metrics {

namespace {

void write_gauge(render::json_writer& out, const gauge& g) {
    if (g.n == 0) {
        out.value(nullptr);
        return;
    }
    out.begin_object()
        .field("n", g.n)
        .field("sum", g.sum)
        .field("min", g.min)
        .field("max", g.max)
        .field("last", g.last)
        .end_object();
}

void gauge_field(render::json_writer& out, render::member_name name, const gauge& g) {
    out.key(name);
    write_gauge(out, g);
}

void write_broker(render::json_writer& out, const broker_counts& c, const broker_gauges& g) {
    out.begin_object()
        .field("push_requests", c.push_requests)
        .field("push_messages", c.push_messages)
        .field("pop_requests", c.pop_requests)
        .field("pop_messages", c.pop_messages)
        .field("pop_empty", c.pop_empty)
        .field("ack_requests", c.ack_requests)
        .field("ack_messages", c.ack_messages)
        .field("ack_success", c.ack_success)
        .field("ack_failed", c.ack_failed)
        .field("transaction_requests", c.transaction_requests)
        .field("dead_lettered", c.dead_lettered)
        .field("db_calls", c.db_calls)
        .field("db_errors", c.db_errors)
        .field("pop_lag_sum_ms", c.pop_lag_sum_ms)
        .field("pop_lag_count", c.pop_lag_count)
        .field("pop_lag_max_ms", c.pop_lag_max_ms);
    gauge_field(out, "loop_lag_ms", g.loop_lag_ms);
    gauge_field(out, "cpu_user", g.cpu_user);
    gauge_field(out, "cpu_system", g.cpu_system);
    gauge_field(out, "rss_bytes", g.rss_bytes);
    gauge_field(out, "virtual_bytes", g.virtual_bytes);
    gauge_field(out, "pool_size", g.pool_size);
    gauge_field(out, "pool_idle", g.pool_idle);
    gauge_field(out, "pool_active", g.pool_active);
    gauge_field(out, "pool_waiting", g.pool_waiting);
    gauge_field(out, "background_jobs", g.background_jobs);
    gauge_field(out, "parked", g.parked);
    out.end_object();
}

void write_queue(render::json_writer& out, const std::string& name, const queue_counts& q, std::int64_t samples) {
    out.begin_object()
        .field("queue_name", name)
        .field("push_requests", q.push_requests)
        .field("push_messages", q.push_messages)
        .field("pop_messages", q.pop_messages)
        .field("pop_empty", q.pop_empty)
        .field("ack_requests", q.ack_requests)
        .field("ack_success", q.ack_success)
        .field("ack_failed", q.ack_failed)
        .field("transactions", q.transactions)
        .field("pop_lag_sum_ms", q.pop_lag_sum_ms)
        .field("pop_lag_count", q.pop_lag_count)
        .field("pop_lag_max_ms", q.pop_lag_max_ms)
        .field("parked_avg", samples > 0 ? q.parked_sum / static_cast<double>(samples) : 0.0)
        .end_object();
}

}  // namespace

std::string activity_document(const minute_activity& minute, const broker_identity& broker, int retention_days) {
    render::json_writer out;
    out.begin_object()
        .field("minute", domain::iso_time(minute.minute_us))
        .field("hostname", broker.hostname)
        .field("port", broker.port)
        .field("retention_days", retention_days)
        .key("broker");
    write_broker(out, minute.counts, minute.gauges);
    out.key("queues").begin_array();
    for (const auto& [name, q] : minute.queues) write_queue(out, name, q, minute.samples);
    out.end_array().end_object();
    return out.take();
}

}  // namespace queen::metrics
