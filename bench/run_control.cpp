#include "run_control.hpp"

#include <fmt/core.h>

#include <cstdio>

namespace queen::bench {

void run_control::stop(stop_reason why, std::string detail) {
    {
        std::lock_guard lock(mutex_);
        if (reason_ != stop_reason::none) return;
        reason_ = why;
        fatal_detail_ = std::move(detail);
        stopping_ = true;
    }
    for (auto* c : clients_) c->cancel();
}

stop_reason run_control::reason() const {
    std::lock_guard lock(mutex_);
    return reason_;
}

std::string run_control::fatal_detail() const {
    std::lock_guard lock(mutex_);
    return fatal_detail_;
}

void run_control::mark_consumed_all(steady::time_point t) {
    std::lock_guard lock(mutex_);
    if (!consumed_all_at_) consumed_all_at_ = t;
}

std::optional<steady::time_point> run_control::consumed_all_at() const {
    std::lock_guard lock(mutex_);
    return consumed_all_at_;
}

void run_control::report_error(const std::string& kind, const std::string& what) {
    std::uint64_t n = 0;
    {
        std::lock_guard lock(mutex_);
        auto it = error_counts_.begin();
        for (; it != error_counts_.end(); ++it)
            if (it->first == kind) break;
        if (it == error_counts_.end()) it = error_counts_.insert(it, {kind, 0});
        n = ++it->second;
    }
    if (n <= 20 || n % 1000 == 0) fmt::print(stderr, "queen_bench: {} #{}: {}\n", kind, n, what);
}

void run_control::progress(const std::string& line) const {
    if (!quiet_) fmt::print(stderr, "queen_bench: {}\n", line);
}

void run_control::worker_finished() {
    if (--workers_ == 0 && on_idle_) on_idle_();
}

}  // namespace queen::bench
