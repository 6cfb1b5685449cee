#pragma once
// A Prometheus scrape (GET /metrics/prometheus, docs/metrics.md): the in-process families of
// prometheus_metrics, the gauges read at scrape time, and the database samples of
// queen.metrics_scrape() (cached by the caller), written by prometheus-cpp's text serializer.
#include "metrics/process_usage.hpp"
#include "metrics/prometheus_metrics.hpp"
#include "store/metrics_store.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace queen::metrics {

// What the broker reads for a scrape besides its counters.
struct scrape_state {
    double uptime_seconds = 0;
    process_usage process;
    std::size_t pool_size = 0, pool_idle = 0, pool_active = 0, pool_waiting = 0;
    bool maintenance_push = false, maintenance_pop = false;
    std::uint64_t spool_pending = 0, spool_bytes = 0, spool_drained = 0, spool_drain_failures = 0;
    std::map<std::string, std::size_t, std::less<>> parked_by_queue;
    bool listen_connected = false;
    std::uint64_t notifications_sent = 0, notifications_received = 0;
    // The latest queen.metrics_scrape() answer; nullopt when the database has not answered.
    std::optional<std::vector<store::metrics_sample>> database;
    bool database_healthy = false;  // the latest fetch succeeded
    // With tenancy on, the tenant that owns the queues stored without one: per-queue series
    // then carry a tenant label (metrics/tenant_labels.hpp). nullopt: tenancy off.
    std::optional<std::string> tenancy_default;
};

// The families of one scrape, in the text exposition format (version 0.0.4).
std::string render_exposition(prometheus_metrics& metrics, const scrape_state& state);

}  // namespace queen::metrics
