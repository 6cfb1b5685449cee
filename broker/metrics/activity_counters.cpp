#include "metrics/activity_counters.hpp"

#include <algorithm>

namespace queen::metrics {

void gauge::add(double v) noexcept {
    if (n == 0) {
        min = max = v;
    } else {
        min = std::min(min, v);
        max = std::max(max, v);
    }
    ++n;
    sum += v;
    last = v;
}

activity_counters::activity_counters(std::int64_t minute_us) {
    current_.minute_us = minute_us;
}

queue_counts& activity_counters::queue_locked(std::string_view queue) {
    auto it = current_.queues.find(queue);
    if (it == current_.queues.end()) it = current_.queues.emplace(std::string(queue), queue_counts{}).first;
    return it->second;
}

void activity_counters::push_request(std::string_view queue, std::int64_t messages) {
    std::lock_guard lock(mutex_);
    current_.counts.push_messages += messages;
    auto& q = queue_locked(queue);
    ++q.push_requests;
    q.push_messages += messages;
}

void activity_counters::push_request_total() noexcept {
    std::lock_guard lock(mutex_);
    ++current_.counts.push_requests;
}

void activity_counters::pop(std::string_view queue, std::int64_t messages, std::int64_t lag_sum_ms,
                            std::int64_t lag_max_ms) {
    std::lock_guard lock(mutex_);
    auto& c = current_.counts;
    ++c.pop_requests;
    c.pop_messages += messages;
    c.pop_lag_sum_ms += lag_sum_ms;
    c.pop_lag_count += messages;
    c.pop_lag_max_ms = std::max(c.pop_lag_max_ms, lag_max_ms);
    auto& q = queue_locked(queue);
    q.pop_messages += messages;
    q.pop_lag_sum_ms += lag_sum_ms;
    q.pop_lag_count += messages;
    q.pop_lag_max_ms = std::max(q.pop_lag_max_ms, lag_max_ms);
}

void activity_counters::pop_empty(std::string_view queue) {
    std::lock_guard lock(mutex_);
    ++current_.counts.pop_requests;
    ++current_.counts.pop_empty;
    ++queue_locked(queue).pop_empty;
}

void activity_counters::ack_request_total(std::int64_t messages) noexcept {
    std::lock_guard lock(mutex_);
    ++current_.counts.ack_requests;
    current_.counts.ack_messages += messages;
}

void activity_counters::ack(std::string_view queue, std::int64_t success, std::int64_t failed, bool new_request) {
    std::lock_guard lock(mutex_);
    current_.counts.ack_success += success;
    current_.counts.ack_failed += failed;
    auto& q = queue_locked(queue);
    if (new_request) ++q.ack_requests;
    q.ack_success += success;
    q.ack_failed += failed;
}

void activity_counters::transaction(std::string_view queue) {
    std::lock_guard lock(mutex_);
    ++queue_locked(queue).transactions;
}

void activity_counters::transaction_total() noexcept {
    std::lock_guard lock(mutex_);
    ++current_.counts.transaction_requests;
}

void activity_counters::dead_lettered(std::int64_t messages) noexcept {
    std::lock_guard lock(mutex_);
    current_.counts.dead_lettered += messages;
}

void activity_counters::loop_lag(double ms) noexcept {
    std::lock_guard lock(mutex_);
    current_.gauges.loop_lag_ms.add(ms);
}

void activity_counters::sample(const gauge_sample& s,
                               const std::map<std::string, std::size_t, std::less<>>& parked_by_queue) {
    std::lock_guard lock(mutex_);
    auto& g = current_.gauges;
    g.cpu_user.add(s.cpu_user);
    g.cpu_system.add(s.cpu_system);
    g.rss_bytes.add(s.rss_bytes);
    g.virtual_bytes.add(s.virtual_bytes);
    g.pool_size.add(s.pool_size);
    g.pool_idle.add(s.pool_idle);
    g.pool_active.add(s.pool_active);
    g.pool_waiting.add(s.pool_waiting);
    g.background_jobs.add(s.background_jobs);
    g.parked.add(s.parked);
    current_.counts.db_calls += s.db_calls;
    current_.counts.db_errors += s.db_errors;
    ++current_.samples;
    for (const auto& [queue, n] : parked_by_queue) queue_locked(queue).parked_sum += static_cast<double>(n);
}

minute_activity activity_counters::take(std::int64_t next_minute_us) {
    std::lock_guard lock(mutex_);
    minute_activity out = std::move(current_);
    current_ = minute_activity{};
    current_.minute_us = next_minute_us;
    return out;
}

}  // namespace queen::metrics
