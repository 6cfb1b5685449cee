#pragma once
// This broker's in-process Prometheus families (docs/metrics.md): monotonic counters and
// histograms updated in memory after the work they count committed, O(1) per event, from any
// io thread. A scrape collects them with the families read at scrape time (metrics/exposition).
#include "metrics/minute_rate.hpp"
#include "metrics/queue_label_cap.hpp"
#include "metrics/series_cache.hpp"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace queen::metrics {

class prometheus_metrics {
public:
    explicit prometheus_metrics(std::size_t max_queue_labels);

    // Messages, by queue (and group): n of them, after commit.
    void published(std::string_view queue, std::int64_t n);
    void duplicates(std::string_view queue, std::int64_t n);
    void buffered(std::string_view queue, std::int64_t n);
    void delivered(std::string_view queue, std::string_view group, std::int64_t n);
    void redelivered(std::string_view queue, std::string_view group, std::int64_t n);
    void leases_expired(std::string_view queue, std::string_view group, std::int64_t n);
    void acked(std::string_view queue, std::string_view group, std::int64_t n);
    void nacked(std::string_view queue, std::string_view group, std::string_view status, std::int64_t n);
    void dead_lettered(std::string_view queue, std::string_view group, std::string_view reason, std::int64_t n);
    void deleted(std::string_view queue);
    // kind: retention or completed.
    void retention_removed(std::string_view queue, std::string_view kind, std::int64_t n);
    void pop(std::string_view queue, bool had_messages);

    // One answered HTTP request; route is its template, "unmatched" when none matched.
    void http_request(std::string_view route, std::string_view method, unsigned status, double seconds);
    void http_started() { in_flight_.Increment(); }
    void http_finished() { in_flight_.Decrement(); }

    void longpoll_waited(double seconds) { longpoll_wait_.Observe(seconds); }
    // reason: push, notify, recheck, timeout or disconnect.
    void longpoll_woken(std::string_view reason);
    void fused_call(std::size_t items, std::size_t requests, double seconds);
    void fused_pop_call(std::size_t requests) { pop_fusion_requests_.Observe(static_cast<double>(requests)); }
    void pool_waited(double seconds) { pool_wait_.Observe(seconds); }
    // A failed statement, counted by the class of its SQLSTATE (its first two characters).
    void db_error(std::string_view sqlstate);
    void loop_lag(double seconds) { loop_lag_.Observe(seconds); }
    // One answered stream cycle (docs/streams.md): committed or failed (nothing applied), the
    // state ops and sink pushes it committed, and its time in the database (none: refused
    // before it reached the database).
    void stream_cycle(bool committed, std::int64_t upserts, std::int64_t deletes, std::int64_t sink_pushes,
                      std::optional<double> seconds);

    // Every family above, as a scrape writes them.
    std::vector<prometheus::MetricFamily> collect() const { return registry_->Collect(); }
    queue_label_cap& queue_labels() noexcept { return queues_; }

    // Totals since start, for GET /metrics (JSON).
    std::uint64_t http_requests_total() const noexcept { return http_total_.load(std::memory_order_relaxed); }
    std::uint64_t published_total() const noexcept { return published_all_.load(std::memory_order_relaxed); }
    // Per second over the last minute.
    double http_requests_rate() const { return http_rate_.per_second(steady_seconds()); }
    double published_rate() const { return published_rate_.per_second(steady_seconds()); }

private:
    using buckets = prometheus::Histogram::BucketBoundaries;

    queue_label_cap queues_;
    std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
    prometheus::Family<prometheus::Counter>& published_family_;
    prometheus::Family<prometheus::Counter>& duplicate_family_;
    prometheus::Family<prometheus::Counter>& buffered_family_;
    prometheus::Family<prometheus::Counter>& delivered_family_;
    prometheus::Family<prometheus::Counter>& redelivered_family_;
    prometheus::Family<prometheus::Counter>& acked_family_;
    prometheus::Family<prometheus::Counter>& nacked_family_;
    prometheus::Family<prometheus::Counter>& dead_lettered_family_;
    prometheus::Family<prometheus::Counter>& deleted_family_;
    prometheus::Family<prometheus::Counter>& retention_family_;
    prometheus::Family<prometheus::Counter>& leases_expired_family_;
    prometheus::Family<prometheus::Counter>& pops_family_;
    prometheus::Family<prometheus::Counter>& http_family_;
    prometheus::Family<prometheus::Histogram>& http_duration_family_;
    prometheus::Family<prometheus::Counter>& wakeups_family_;
    prometheus::Family<prometheus::Counter>& db_errors_family_;
    prometheus::Family<prometheus::Counter>& stream_cycles_family_;
    prometheus::Family<prometheus::Counter>& stream_state_ops_family_;
    prometheus::Counter& stream_cycles_committed_;
    prometheus::Counter& stream_cycles_failed_;
    prometheus::Counter& stream_upserts_;
    prometheus::Counter& stream_deletes_;
    prometheus::Counter& stream_sink_pushes_;
    prometheus::Histogram& stream_cycle_seconds_;
    series_cache<prometheus::Counter, 1> published_, duplicate_, buffered_, deleted_;
    series_cache<prometheus::Counter, 2> delivered_, redelivered_, leases_expired_, acked_, retention_, pops_;
    series_cache<prometheus::Counter, 3> nacked_, dead_lettered_, http_;
    series_cache<prometheus::Histogram, 1, buckets> http_duration_;
    series_cache<prometheus::Counter, 1> wakeups_, db_errors_;
    prometheus::Gauge& in_flight_;
    prometheus::Histogram& longpoll_wait_;
    prometheus::Histogram& fusion_items_;
    prometheus::Histogram& fusion_requests_;
    prometheus::Histogram& fusion_seconds_;
    prometheus::Histogram& pop_fusion_requests_;
    prometheus::Histogram& pool_wait_;
    prometheus::Histogram& loop_lag_;
    std::atomic<std::uint64_t> http_total_{0};     // Σ of queen_http_requests_total
    std::atomic<std::uint64_t> published_all_{0};  // Σ of queen_messages_published_total
    minute_rate http_rate_, published_rate_;
};

}  // namespace queen::metrics
