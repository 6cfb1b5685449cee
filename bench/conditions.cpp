#include "conditions.hpp"

#include "roles.hpp"

#include <fmt/core.h>

namespace queen::bench {

using nlohmann::json;

namespace {

// "10 (q-g0..q-g9, subscription=all)" or "0".
std::string groups_text(const options& o) {
    if (o.groups == 0) return "0";
    return fmt::format("{} ({}..{}, subscription=all)", o.groups, group_name(o, 0), group_name(o, o.groups - 1));
}

// "300s (intervals 60s, drain <=300s)" or "off".
std::string duration_text(const options& o) {
    if (o.duration_seconds == 0) return "off";
    return fmt::format("{}s (intervals {}s, drain <={}s)", o.duration_seconds, o.interval_seconds, o.drain_seconds);
}

}  // namespace

// Lists every option that shapes the figures; new options must be added here and in conditions_json.
std::string condition_line(const options& o) {
    const bool pipeline = o.mode == run_mode::pipeline;
    return fmt::format(
        "mode={} messages={} partitions={} connections={} (producers={} consumers={}) push-batch={} pop-batch={} "
        "pop-partitions={} payload-bytes={} acks={} dedup={} wait={} consumer-group={} groups={} rate={} stages={} "
        "inject-tx-failures={} duration={} queue={} url={} client-threads={}",
        to_string(o.mode), o.messages, o.partitions, o.connections, o.producers, o.consumers, o.push_batch,
        o.pop_batch, o.pop_partitions, o.payload_bytes, o.auto_ack ? "auto" : "explicit", o.dedup ? "on" : "off",
        o.wait ? fmt::format("on({}ms)", o.wait_timeout_ms) : std::string("off"),
        o.consumer_group.empty() ? std::string("(queue mode)") : o.consumer_group, groups_text(o),
        o.rate ? fmt::format("{}/s", o.rate) : std::string("unpaced"),
        pipeline ? fmt::format("{} ({}..{}, workers/stage {})", o.stages, stage_queue(o, 0), stage_queue(o, o.stages - 1),
                               workers_per_stage_text(o))
                 : std::string("-"),
        pipeline && o.inject_tx_failures ? fmt::format("every {}th", o.inject_tx_failures) : std::string("off"),
        duration_text(o), o.queue, o.url, o.threads);
}

// Same facts as condition_line, as typed JSON values (null where a condition does not apply).
json conditions_json(const options& o) {
    const bool pipeline = o.mode == run_mode::pipeline;
    return json{{"mode", to_string(o.mode)},
                {"url", o.url},
                {"queue", o.queue},
                {"messages", o.messages},
                {"partitions", o.partitions},
                {"connections", o.connections},
                {"producers", o.producers},
                {"consumers", o.consumers},
                {"pushBatch", o.push_batch},
                {"popBatch", o.pop_batch},
                {"popPartitions", o.pop_partitions},
                {"payloadBytes", o.payload_bytes},
                {"acks", o.auto_ack ? "auto" : "explicit"},
                {"dedup", o.dedup},
                {"wait", o.wait},
                {"waitTimeoutMs", o.wait_timeout_ms},
                {"idleSleepMs", o.idle_sleep_ms},
                {"consumerGroup", o.consumer_group.empty() ? json(nullptr) : json(o.consumer_group)},
                {"groups", o.groups},
                {"subscriptionMode", o.groups ? json("all") : json(nullptr)},
                {"rate", o.rate ? json(o.rate) : json(nullptr)},
                {"stages", pipeline ? json(o.stages) : json(nullptr)},
                {"workersPerStage", pipeline ? json(workers_per_stage(o)) : json(nullptr)},
                {"injectTxFailures", pipeline && o.inject_tx_failures ? json(o.inject_tx_failures) : json(nullptr)},
                {"durationSeconds", o.duration_seconds ? json(o.duration_seconds) : json(nullptr)},
                {"intervalSeconds", o.duration_seconds ? json(o.interval_seconds) : json(nullptr)},
                {"drainSeconds", o.duration_seconds ? json(o.drain_seconds) : json(nullptr)},
                {"clientThreads", o.threads},
                {"maxSeconds", o.max_seconds},
                {"stallSeconds", o.stall_seconds}};
}

}  // namespace queen::bench
