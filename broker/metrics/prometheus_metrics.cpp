#include "metrics/prometheus_metrics.hpp"

#include <string>

namespace queen::metrics {

namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;
using buckets = prometheus::Histogram::BucketBoundaries;

prometheus::Family<prometheus::Counter>& counter(prometheus::Registry& r, const char* name, const char* help) {
    return BuildCounter().Name(name).Help(help).Register(r);
}

prometheus::Histogram& histogram(prometheus::Registry& r, const char* name, const char* help, buckets b) {
    return BuildHistogram().Name(name).Help(help).Register(r).Add({}, std::move(b));
}

// Request latencies from 0.5 ms to 10 s.
buckets seconds_buckets() {
    return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

void add(prometheus::Counter& c, std::int64_t n) {
    if (n > 0) c.Increment(static_cast<double>(n));
}

}  // namespace

prometheus_metrics::prometheus_metrics(std::size_t max_queue_labels)
    : queues_(max_queue_labels),
      published_family_(
          counter(*registry_, "queen_messages_published_total", "New messages committed (spooled ones when drained)")),
      duplicate_family_(counter(*registry_, "queen_messages_duplicate_total", "Push items answered duplicate")),
      buffered_family_(counter(*registry_, "queen_messages_buffered_total", "Push items accepted into the spool")),
      delivered_family_(
          counter(*registry_, "queen_messages_delivered_total", "Messages handed out by pops, redeliveries included")),
      redelivered_family_(counter(*registry_, "queen_messages_redelivered_total",
                                  "Deliveries of an offset the group was handed before")),
      acked_family_(
          counter(*registry_, "queen_messages_acked_total", "Messages committed by completed acks and autoAck pops")),
      nacked_family_(counter(*registry_, "queen_messages_nacked_total", "Nacks (failed, retry) that took effect")),
      dead_lettered_family_(
          counter(*registry_, "queen_messages_dead_lettered_total", "Messages moved to the dead letters, by reason")),
      deleted_family_(counter(*registry_, "queen_messages_deleted_total", "Tombstones written")),
      retention_family_(counter(*registry_, "queen_retention_removed_messages_total",
                                "Messages removed by retention runs this broker led")),
      leases_expired_family_(counter(*registry_, "queen_leases_expired_total", "Leases taken over after expiry")),
      pops_family_(counter(*registry_, "queen_pops_total", "Pop requests by outcome")),
      http_family_(counter(*registry_, "queen_http_requests_total", "HTTP requests answered, by route template")),
      http_duration_family_(BuildHistogram()
                                .Name("queen_http_request_duration_seconds")
                                .Help("Time until the answer is ready, a long-poll's parked time excluded")
                                .Register(*registry_)),
      wakeups_family_(counter(*registry_, "queen_longpoll_wakeups_total", "Parked pops woken, by reason")),
      db_errors_family_(counter(*registry_, "queen_db_errors_total", "Failed statements by SQLSTATE class")),
      stream_cycles_family_(counter(*registry_, "queen_stream_cycles_total",
                                    "Stream cycles answered, by result (committed, or failed with nothing applied)")),
      stream_state_ops_family_(
          counter(*registry_, "queen_stream_state_ops_total", "State ops of committed stream cycles, by type")),
      stream_cycles_committed_(stream_cycles_family_.Add({{"result", "committed"}})),
      stream_cycles_failed_(stream_cycles_family_.Add({{"result", "failed"}})),
      stream_upserts_(stream_state_ops_family_.Add({{"type", "upsert"}})),
      stream_deletes_(stream_state_ops_family_.Add({{"type", "delete"}})),
      stream_sink_pushes_(counter(*registry_, "queen_stream_sink_pushes_total",
                                  "Sink push items of committed stream cycles (duplicates included)")
                              .Add({})),
      stream_cycle_seconds_(histogram(*registry_, "queen_stream_cycle_seconds",
                                      "Time of a stream cycle in the database, failed ones included",
                                      seconds_buckets())),
      published_(published_family_, {"queue"}),
      duplicate_(duplicate_family_, {"queue"}),
      buffered_(buffered_family_, {"queue"}),
      deleted_(deleted_family_, {"queue"}),
      delivered_(delivered_family_, {"queue", "consumer_group"}),
      redelivered_(redelivered_family_, {"queue", "consumer_group"}),
      leases_expired_(leases_expired_family_, {"queue", "consumer_group"}),
      acked_(acked_family_, {"queue", "consumer_group"}),
      retention_(retention_family_, {"queue", "kind"}),
      pops_(pops_family_, {"queue", "result"}),
      nacked_(nacked_family_, {"queue", "consumer_group", "status"}),
      dead_lettered_(dead_lettered_family_, {"queue", "consumer_group", "reason"}),
      http_(http_family_, {"route", "method", "status"}),
      http_duration_(http_duration_family_, {"route"}, seconds_buckets()),
      wakeups_(wakeups_family_, {"reason"}),
      db_errors_(db_errors_family_, {"class"}),
      in_flight_(BuildGauge()
                     .Name("queen_http_requests_in_flight")
                     .Help("HTTP requests being answered")
                     .Register(*registry_)
                     .Add({})),
      longpoll_wait_(histogram(*registry_, "queen_longpoll_wait_seconds", "Time parked until wake or timeout",
                               {0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60})),
      fusion_items_(histogram(*registry_, "queen_push_fusion_batch_items", "Items per fused queen.push call",
                              {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000})),
      fusion_requests_(histogram(*registry_, "queen_push_fusion_batch_requests", "HTTP requests per fused call",
                                 {1, 2, 4, 8, 16, 32, 64, 128, 256})),
      fusion_seconds_(
          histogram(*registry_, "queen_push_fusion_call_seconds", "Duration of a fused call", seconds_buckets())),
      pop_fusion_requests_(histogram(*registry_, "queen_pop_fusion_batch_requests",
                                     "Queue-wide pops answered by one queen.pop_fused call", {1, 2, 4, 8, 16, 32, 64})),
      pool_wait_(histogram(*registry_, "queen_db_pool_wait_seconds", "Time spent waiting for a connection",
                           {0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10})),
      loop_lag_(histogram(*registry_, "queen_event_loop_lag_seconds", "Lateness of a 100 ms timer",
                          {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1})) {}

void prometheus_metrics::published(std::string_view queue, std::int64_t n) {
    if (n <= 0) return;
    add(published_.get({queues_.label(queue)}), n);
    published_all_.fetch_add(static_cast<std::uint64_t>(n), std::memory_order_relaxed);
    published_rate_.add(steady_seconds(), static_cast<std::uint64_t>(n));
}

void prometheus_metrics::duplicates(std::string_view queue, std::int64_t n) {
    if (n > 0) add(duplicate_.get({queues_.label(queue)}), n);
}

void prometheus_metrics::buffered(std::string_view queue, std::int64_t n) {
    if (n > 0) add(buffered_.get({queues_.label(queue)}), n);
}

void prometheus_metrics::delivered(std::string_view queue, std::string_view group, std::int64_t n) {
    if (n > 0) add(delivered_.get({queues_.label(queue), group}), n);
}

void prometheus_metrics::redelivered(std::string_view queue, std::string_view group, std::int64_t n) {
    if (n > 0) add(redelivered_.get({queues_.label(queue), group}), n);
}

void prometheus_metrics::leases_expired(std::string_view queue, std::string_view group, std::int64_t n) {
    if (n > 0) add(leases_expired_.get({queues_.label(queue), group}), n);
}

void prometheus_metrics::acked(std::string_view queue, std::string_view group, std::int64_t n) {
    if (n > 0) add(acked_.get({queues_.label(queue), group}), n);
}

void prometheus_metrics::nacked(std::string_view queue, std::string_view group, std::string_view status,
                                std::int64_t n) {
    if (n > 0) add(nacked_.get({queues_.label(queue), group, status}), n);
}

void prometheus_metrics::dead_lettered(std::string_view queue, std::string_view group, std::string_view reason,
                                       std::int64_t n) {
    if (n > 0) add(dead_lettered_.get({queues_.label(queue), group, reason}), n);
}

void prometheus_metrics::stream_cycle(bool committed, std::int64_t upserts, std::int64_t deletes,
                                      std::int64_t sink_pushes, std::optional<double> seconds) {
    if (seconds) stream_cycle_seconds_.Observe(*seconds);
    if (!committed) {
        stream_cycles_failed_.Increment();
        return;
    }
    stream_cycles_committed_.Increment();
    add(stream_upserts_, upserts);
    add(stream_deletes_, deletes);
    add(stream_sink_pushes_, sink_pushes);
}

void prometheus_metrics::deleted(std::string_view queue) {
    deleted_.get({queues_.label(queue)}).Increment();
}

void prometheus_metrics::retention_removed(std::string_view queue, std::string_view kind, std::int64_t n) {
    if (n > 0) add(retention_.get({queues_.label(queue), kind}), n);
}

void prometheus_metrics::pop(std::string_view queue, bool had_messages) {
    pops_.get({queues_.label(queue), had_messages ? "messages" : "empty"}).Increment();
}

void prometheus_metrics::http_request(std::string_view route, std::string_view method, unsigned status,
                                      double seconds) {
    const std::string code = std::to_string(status);
    http_.get({route, method, code}).Increment();
    http_duration_.get({route}).Observe(seconds);
    http_total_.fetch_add(1, std::memory_order_relaxed);
    http_rate_.add(steady_seconds(), 1);
}

void prometheus_metrics::longpoll_woken(std::string_view reason) {
    wakeups_.get({reason}).Increment();
}

void prometheus_metrics::fused_call(std::size_t items, std::size_t requests, double seconds) {
    fusion_items_.Observe(static_cast<double>(items));
    fusion_requests_.Observe(static_cast<double>(requests));
    fusion_seconds_.Observe(seconds);
}

void prometheus_metrics::db_error(std::string_view sqlstate) {
    db_errors_.get({sqlstate.substr(0, std::min<std::size_t>(2, sqlstate.size()))}).Increment();
}

}  // namespace queen::metrics
