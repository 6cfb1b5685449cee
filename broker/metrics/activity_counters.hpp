#pragma once
// This broker's activity of the current minute, counted in memory (docs/status-and-analytics.md).
// Handlers record events after their database work committed; the sampler adds gauges once a
// second; the flusher takes the minute's counts and adds them to the database by UPSERT. Every
// call is O(1) (a map lookup per queue) under one short lock: calls come from every io thread.
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace queen::metrics {

// A sampled value over a minute: avg = sum / n.
struct gauge {
    std::int64_t n = 0;
    double sum = 0, min = 0, max = 0, last = 0;
    void add(double v) noexcept;
};

struct broker_counts {
    std::int64_t push_requests = 0, push_messages = 0, pop_requests = 0, pop_messages = 0, pop_empty = 0,
                 ack_requests = 0, ack_messages = 0, ack_success = 0, ack_failed = 0, transaction_requests = 0,
                 dead_lettered = 0, db_calls = 0, db_errors = 0, pop_lag_sum_ms = 0, pop_lag_count = 0,
                 pop_lag_max_ms = 0;
};

struct broker_gauges {
    gauge loop_lag_ms, cpu_user, cpu_system, rss_bytes, virtual_bytes, pool_size, pool_idle, pool_active, pool_waiting,
        background_jobs, parked;
};

struct queue_counts {
    std::int64_t push_requests = 0, push_messages = 0, pop_messages = 0, pop_empty = 0, ack_requests = 0,
                 ack_success = 0, ack_failed = 0, transactions = 0, pop_lag_sum_ms = 0, pop_lag_count = 0,
                 pop_lag_max_ms = 0;
    double parked_sum = 0;  // Σ over the minute's 1 s samples of parked long-polls
};

// One minute of one broker, as the flush writes it.
struct minute_activity {
    std::int64_t minute_us = 0;  // start of the minute, Unix µs
    broker_counts counts;
    broker_gauges gauges;
    std::int64_t samples = 0;  // 1 s samples taken (the divisor of queue parked_sum)
    std::map<std::string, queue_counts, std::less<>> queues;
};

// The 1 s sample of the broker's gauges.
struct gauge_sample {
    double cpu_user = 0, cpu_system = 0;  // percent of one core × 100 since the previous sample
    double rss_bytes = 0, virtual_bytes = 0;
    double pool_size = 0, pool_idle = 0, pool_active = 0, pool_waiting = 0;
    double background_jobs = 0, parked = 0;
    std::int64_t db_calls = 0, db_errors = 0;  // completed and failed statements since the previous sample
};

class activity_counters {
public:
    explicit activity_counters(std::int64_t minute_us);

    void push_request(std::string_view queue, std::int64_t messages);
    void push_request_total() noexcept;  // one per HTTP push request
    void pop(std::string_view queue, std::int64_t messages, std::int64_t lag_sum_ms, std::int64_t lag_max_ms);
    void pop_empty(std::string_view queue);
    void ack_request_total(std::int64_t messages) noexcept;  // one per HTTP ack request
    void ack(std::string_view queue, std::int64_t success, std::int64_t failed, bool new_request);
    void transaction(std::string_view queue);  // per queue a transaction touched
    void transaction_total() noexcept;
    void dead_lettered(std::int64_t messages) noexcept;
    void loop_lag(double ms) noexcept;
    // Adds one 1 s sample; parked_by_queue lists the queues with parked long-polls.
    void sample(const gauge_sample& s, const std::map<std::string, std::size_t, std::less<>>& parked_by_queue);

    // The counts since the previous take, labelled with their minute; the next minute starts
    // at next_minute_us.
    minute_activity take(std::int64_t next_minute_us);

private:
    queue_counts& queue_locked(std::string_view queue);

    std::mutex mutex_;
    minute_activity current_;
};

}  // namespace queen::metrics
