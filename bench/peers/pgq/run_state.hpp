#pragma once
// What the threads of one run share: the start gate, the stop flag with its first reason, and
// progress counters; plus the per-thread measurements merged after the run.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <latch>
#include <mutex>
#include <optional>
#include <string>

namespace pgq_bench {

using steady = std::chrono::steady_clock;

enum class stop_reason { none, time_limit, stalled, fatal, interrupted };

class run_state {
public:
    explicit run_state(std::ptrdiff_t workers) : ready_(workers) {}

    // Called by each worker once connected (or failed): it then blocks until go() was called.
    void arrive_and_wait_start() {
        ready_.count_down();
        go_.wait();
    }
    // Waits until every worker arrived, then releases them all; returns the release time.
    steady::time_point start_all() {
        ready_.wait();
        const auto t = steady::now();
        go_.count_down();
        return t;
    }

    // Asks every thread to stop; the first reason (and its detail) is kept.
    void stop(stop_reason r, std::string detail = {}) {
        std::lock_guard lock(m_);
        if (reason_ == stop_reason::none) reason_ = r, detail_ = std::move(detail);
        stopping_ = true;
    }
    bool stopping() const { return stopping_.load(std::memory_order_relaxed); }
    stop_reason reason() const {
        std::lock_guard lock(m_);
        return reason_;
    }
    std::string detail() const {
        std::lock_guard lock(m_);
        return detail_;
    }

    std::atomic<std::uint64_t> inserted{0};  // events committed by the producers so far
    std::atomic<std::uint64_t> consumed{0};  // distinct expected events finished by the consumer
    std::atomic<int> workers_running{0};

private:
    std::latch ready_, go_{1};
    std::atomic<bool> stopping_{false};
    mutable std::mutex m_;
    stop_reason reason_ = stop_reason::none;
    std::string detail_;
};

// Earliest start / latest end of an activity over many threads.
struct time_span {
    std::optional<steady::time_point> first, last;
    void start(steady::time_point t) {
        if (!first || t < *first) first = t;
    }
    void end(steady::time_point t) {
        if (!last || t > *last) last = t;
    }
    void merge(const time_span& o) {
        if (o.first) start(*o.first);
        if (o.last) end(*o.last);
    }
    double seconds() const {
        if (!first || !last || *last <= *first) return 0;
        return std::chrono::duration<double>(*last - *first).count();
    }
};

}  // namespace pgq_bench
