#pragma once
// The run's shared control: why and when it stops, cancelling every connection at once,
// rate-limited error lines on stderr, and counting live workers.
#include "http_client.hpp"
#include "stats.hpp"

#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace queen::bench {

enum class stop_reason { none, done, time_limit, stalled, fatal };

class run_control {
public:
    explicit run_control(bool quiet) : quiet_(quiet) {}

    void add_client(http_client* c) { clients_.push_back(c); }  // before the run starts

    // First reason wins; cancels every connection's request or sleep in progress.
    void stop(stop_reason why, std::string detail = {});
    bool stopping() const { return stopping_.load(); }
    stop_reason reason() const;
    std::string fatal_detail() const;

    // The moment the consumers settled the last expected message (first call wins).
    void mark_consumed_all(steady::time_point t);
    std::optional<steady::time_point> consumed_all_at() const;

    // A request failed: one line on stderr (the first 20 of a kind, then every 1000th).
    void report_error(const std::string& kind, const std::string& what);

    // Progress line on stderr (unless quiet).
    void progress(const std::string& line) const;

    // Items the producers got accepted so far (for progress lines).
    void add_pushed(std::uint64_t n) { pushed_ += n; }
    std::uint64_t pushed() const { return pushed_.load(); }

    // Workers (producer and consumer coroutines); `on_idle` runs when the last one ends.
    void set_on_idle(std::function<void()> f) { on_idle_ = std::move(f); }
    void worker_started() { ++workers_; }
    void worker_finished();

private:
    bool quiet_;
    std::vector<http_client*> clients_;
    std::atomic<bool> stopping_{false};
    mutable std::mutex mutex_;
    stop_reason reason_ = stop_reason::none;
    std::string fatal_detail_;
    std::optional<steady::time_point> consumed_all_at_;
    std::vector<std::pair<std::string, std::uint64_t>> error_counts_;
    std::atomic<int> workers_{0};
    std::atomic<std::uint64_t> pushed_{0};
    std::function<void()> on_idle_;
};

}  // namespace queen::bench
