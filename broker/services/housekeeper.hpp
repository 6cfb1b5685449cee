#pragma once
// Background housekeeping (retention, dedup expiry, idle groups, idle partitions; and, each on
// its own interval, the raise of the claim floors and the refresh of the stats snapshot), run by exactly one broker at
// a time: the one whose dedicated connection holds the session advisory lock. When that broker dies its session ends,
// the lock is free, and another broker takes over at its next tick.
#include "db/pg_pool.hpp"
#include "store/maintenance_store.hpp"

#include <utility>
#include <boost/asio/any_io_executor.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace queen::services {

struct housekeeper_options {
    std::string conninfo;
    bool prepared_statements = true;  // db::pg_pool_options::prepared_statements
    std::chrono::milliseconds interval{60000};
    std::chrono::milliseconds claim_floor_interval{1000};
    std::chrono::milliseconds stats_interval{10000};  // refresh of the stats snapshot
    bool stats_count_bytes = false;                   // the snapshot sums stored bytes (QUEEN_TENANT_MAX_BYTES)
    std::chrono::seconds group_idle{0};               // 0: groups never expire
    std::chrono::seconds partition_idle{30 * 86400};
    // Optional observer (metrics): what each committed housekeeping round removed, per queue.
    std::function<void(const store::removed_messages&)> on_removed;
};

// The stats snapshot costs in proportion to the partitions it counts: a refresh that took d
// is followed by a pause of at least (stats_duty_divisor - 1) × d, so counting takes at most
// one core's 1/stats_duty_divisor however many partitions there are.
inline constexpr int stats_duty_divisor = 10;

// When the refresh that ran from started to ended is followed by the next: interval after its
// start, or later when the duty cycle asks for it.
std::chrono::steady_clock::time_point next_stats_refresh(std::chrono::steady_clock::time_point started,
                                                         std::chrono::steady_clock::time_point ended,
                                                         std::chrono::milliseconds interval);

class housekeeper {
public:
    housekeeper(boost::asio::any_io_executor executor, housekeeper_options options);
    void start();
    void stop();
    bool leader() const noexcept { return state_->leader.load(); }

private:
    struct state {
        std::atomic<bool> leader{false};
        std::atomic<bool> stopped{false};
    };
    boost::asio::awaitable<void> run();

    boost::asio::any_io_executor executor_;
    housekeeper_options options_;
    std::shared_ptr<state> state_ = std::make_shared<state>();
    std::shared_ptr<db::pg_pool> pool_;  // one dedicated connection: it holds the lock
};

}  // namespace queen::services
