#include "metrics/exposition.hpp"

#include "metrics/tenant_labels.hpp"
#include "schema/codec_path.hpp"

#include <prometheus/text_serializer.h>

#include <utility>
#include <algorithm>
#include <array>
#include <string_view>
#include <unordered_map>

namespace queen::metrics {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

struct database_family {
    std::string_view name;
    MetricType type;
    std::string_view help;
};

// The families queen.metrics_scrape() may answer, in the order a scrape writes them.
constexpr std::array<database_family, 30> database_families{{
    {"queen_queue_messages_ready", MetricType::Gauge, "Messages ready for the group (snapshot)"},
    {"queen_queue_messages_leased", MetricType::Gauge, "Messages inside live leases of the group (snapshot)"},
    {"queen_consumer_lag_messages", MetricType::Gauge, "Messages the group has not committed (snapshot)"},
    {"queen_consumer_lag_seconds", MetricType::Gauge, "Age of the group's oldest uncommitted message (snapshot)"},
    {"queen_consumer_oldest_unacked_age_seconds", MetricType::Gauge,
     "Age of the oldest message inside a live lease of the group (snapshot)"},
    {"queen_dlq_messages", MetricType::Gauge, "Dead letters of the group (snapshot)"},
    {"queen_queue_partitions", MetricType::Gauge, "Partitions of the queue (snapshot)"},
    {"queen_dlq_depth_by_queue", MetricType::Gauge, "Dead letters of the queue (snapshot)"},
    {"queen_dlq_depth", MetricType::Gauge, "Dead letters of the cluster (snapshot)"},
    {"queen_stats_snapshot_age_seconds", MetricType::Gauge, "Age of the snapshot behind the snapshot gauges"},
    {"queen_cluster_push_requests_total", MetricType::Counter,
     "Push requests of every broker since the database was made"},
    {"queen_cluster_pop_requests_total", MetricType::Counter, "Pop requests of every broker"},
    {"queen_cluster_ack_requests_total", MetricType::Counter, "Ack requests of every broker"},
    {"queen_cluster_transactions_total", MetricType::Counter, "Transactions of every broker"},
    {"queen_cluster_push_messages_total", MetricType::Counter, "Messages pushed through every broker"},
    {"queen_cluster_pop_messages_total", MetricType::Counter, "Messages popped through every broker"},
    {"queen_cluster_ack_messages_total", MetricType::Counter, "Messages acknowledged through every broker"},
    {"queen_cluster_ack_total", MetricType::Counter, "Acknowledgements of every broker by result"},
    {"queen_cluster_db_errors_total", MetricType::Counter, "Database errors of every broker"},
    {"queen_cluster_dlq_total", MetricType::Counter, "Messages every broker moved to the dead letters"},
    {"queen_queue_pop_messages_per_minute", MetricType::Gauge, "Messages popped in the queue's newest minute"},
    {"queen_queue_pop_lag_seconds", MetricType::Gauge, "Pop lag in the queue's newest minute"},
    {"queen_queue_push_requests_per_minute", MetricType::Gauge, "Push requests in the queue's newest minute"},
    {"queen_queue_push_messages_per_minute", MetricType::Gauge, "Messages pushed in the queue's newest minute"},
    {"queen_queue_pop_empty_per_minute", MetricType::Gauge, "Empty pops in the queue's newest minute"},
    {"queen_queue_ack_per_minute", MetricType::Gauge, "Acknowledgements in the queue's newest minute"},
    {"queen_queue_transactions_per_minute", MetricType::Gauge, "Transactions in the queue's newest minute"},
    {"queen_queue_metrics_age_seconds", MetricType::Gauge, "Age of the queue's newest minute"},
    {"queen_queue_parked_consumers", MetricType::Gauge, "Pops parked on this broker, by queue"},
    {"queen_build_info", MetricType::Gauge, "The broker's version and the database's segment codec"},
}};

ClientMetric sample(double value, MetricType type, std::vector<ClientMetric::Label> labels = {}) {
    ClientMetric m;
    m.label = std::move(labels);
    if (type == MetricType::Counter)
        m.counter.value = value;
    else
        m.gauge.value = value;
    return m;
}

MetricFamily family(std::string name, std::string help, MetricType type, std::vector<ClientMetric> metrics) {
    return MetricFamily{std::move(name), std::move(help), type, std::move(metrics)};
}

MetricFamily single(std::string name, std::string help, MetricType type, double value) {
    return family(std::move(name), std::move(help), type, {sample(value, type)});
}

// Samples of one database family keyed by their labels, queues past the cap merged into
// "__other__": ages (the *_seconds gauges) by their maximum, everything else by its sum.
std::vector<ClientMetric> database_metrics(const database_family& f,
                                           const std::vector<const store::metrics_sample*>& rows,
                                           queue_label_cap& queues) {
    std::map<std::vector<ClientMetric::Label>, double> merged;
    const bool by_max = f.name.ends_with("_seconds");
    for (const auto* row : rows) {
        const auto& r = *row;
        std::vector<ClientMetric::Label> labels;
        if (r.queue) labels.push_back({"queue", std::string(queues.label(*r.queue))});
        if (r.consumer_group) labels.push_back({"consumer_group", *r.consumer_group});
        if (r.label && r.label_value) labels.push_back({*r.label, *r.label_value});
        auto [it, fresh] = merged.emplace(std::move(labels), r.value);
        if (!fresh) it->second = by_max ? std::max(it->second, r.value) : it->second + r.value;
    }
    std::vector<ClientMetric> out;
    for (auto& [labels, value] : merged) out.push_back(sample(value, f.type, labels));
    return out;
}

// queen_build_info's codec: the segment codec of the database's codec path, "unknown" before
// the database answered.
std::string codec_label(const scrape_state& state) {
    if (!state.database) return "unknown";
    for (const auto& r : *state.database) {
        if (r.family != "codec_extension") continue;
        schema::codec_path path;
        path.extension_version = r.label_value;
        return path.segment_codec();
    }
    return "unknown";
}

}  // namespace

std::string render_exposition(prometheus_metrics& metrics, const scrape_state& s) {
    std::vector<MetricFamily> out;
    const auto G = MetricType::Gauge;
    const auto C = MetricType::Counter;
    out.push_back(single("queen_uptime_seconds", "Seconds since the broker started", G, s.uptime_seconds));
    out.push_back(
        single("queen_cpu_user_seconds_total", "User CPU time of the process", C, s.process.cpu_user_seconds));
    out.push_back(
        single("queen_cpu_system_seconds_total", "System CPU time of the process", C, s.process.cpu_system_seconds));
    out.push_back(single("queen_process_resident_memory_bytes", "Resident memory", G, s.process.resident_bytes));
    out.push_back(single("queen_process_virtual_memory_bytes", "Virtual memory", G, s.process.virtual_bytes));
    out.push_back(single("queen_db_pool_size", "Connections the pool may open", G, static_cast<double>(s.pool_size)));
    out.push_back(single("queen_db_pool_idle", "Idle connections", G, static_cast<double>(s.pool_idle)));
    out.push_back(single("queen_db_pool_active", "Connections in use", G, static_cast<double>(s.pool_active)));
    out.push_back(
        single("queen_db_pool_waiting", "Requests waiting for a connection", G, static_cast<double>(s.pool_waiting)));
    out.push_back(
        single("queen_maintenance_mode_enabled", "Push maintenance on (1) or off (0)", G, s.maintenance_push ? 1 : 0));
    out.push_back(single("queen_pop_maintenance_mode_enabled", "Pop maintenance on (1) or off (0)", G,
                         s.maintenance_pop ? 1 : 0));
    out.push_back(single("queen_file_buffer_pending", "Spooled push items waiting to be drained", G,
                         static_cast<double>(s.spool_pending)));
    out.push_back(single("queen_file_buffer_db_healthy", "The database answered the latest scrape query (1/0)", G,
                         s.database_healthy ? 1 : 0));
    out.push_back(single("queen_spool_items", "Items in the local spool", G, static_cast<double>(s.spool_pending)));
    out.push_back(single("queen_spool_bytes", "Size of the local spool file", G, static_cast<double>(s.spool_bytes)));
    out.push_back(single("queen_spool_drained_total", "Spooled items drained into the database", C,
                         static_cast<double>(s.spool_drained)));
    out.push_back(single("queen_spool_drain_errors_total", "Spool drain batches that failed", C,
                         static_cast<double>(s.spool_drain_failures)));
    out.push_back(
        single("queen_db_listen_connected", "The LISTEN connection is up (1/0)", G, s.listen_connected ? 1 : 0));
    out.push_back(family("queen_notifications_total", "Cross-broker wake-ups", C,
                         {sample(static_cast<double>(s.notifications_sent), C, {{"direction", "sent"}}),
                          sample(static_cast<double>(s.notifications_received), C, {{"direction", "received"}})}));
    std::size_t parked = 0;
    for (const auto& [queue, n] : s.parked_by_queue) parked += n;
    out.push_back(single("queen_longpoll_parked", "Pops parked on this broker", G, static_cast<double>(parked)));

    // The database's rows by family, grouped once: a scrape at scale has tens of thousands.
    std::unordered_map<std::string_view, std::vector<const store::metrics_sample*>> rows_of;
    if (s.database)
        for (const auto& r : *s.database) rows_of[r.family].push_back(&r);
    for (const auto& f : database_families) {
        std::vector<ClientMetric> samples;
        if (f.name == "queen_queue_parked_consumers") {
            std::map<std::string, double> by_label;
            for (const auto& [queue, n] : s.parked_by_queue)
                by_label[std::string(metrics.queue_labels().label(queue))] += static_cast<double>(n);
            for (const auto& [queue, n] : by_label) samples.push_back(sample(n, G, {{"queue", queue}}));
        } else if (f.name == "queen_build_info") {
            samples.push_back(sample(1, G, {{"codec", codec_label(s)}, {"version", QUEEN_VERSION}}));
        } else if (const auto rows = rows_of.find(f.name); rows != rows_of.end()) {
            samples = database_metrics(f, rows->second, metrics.queue_labels());
        }
        if (!samples.empty())
            out.push_back(family(std::string(f.name), std::string(f.help), f.type, std::move(samples)));
    }
    for (auto& f : metrics.collect()) out.push_back(std::move(f));
    if (s.tenancy_default) split_tenant_labels(out, *s.tenancy_default);
    return prometheus::TextSerializer().Serialize(out);
}

}  // namespace queen::metrics
