#pragma once
// Runs on every broker: samples the event-loop lag every 100 ms and the process, pool, spool
// and long-poll gauges every second into activity_counters, and flushes the counts to the
// database (store::flush_activity) every flush interval, at minute boundaries when the
// interval is a minute. A flush that fails is kept (up to an hour of them) and sent again
// with the next one, under its own minute.
#include "db/pg_pool.hpp"
#include "metrics/activity_counters.hpp"
#include "metrics/activity_document.hpp"
#include "services/pop_waiters.hpp"

#include <utility>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

namespace queen::metrics {

struct activity_recorder_options {
    broker_identity broker;
    std::chrono::milliseconds flush_interval{60000};
    int retention_days = 7;
    std::function<std::uint64_t()> background_jobs;   // items waiting in the spool
    std::function<void(double seconds)> on_loop_lag;  // optional: each 100 ms sample of the loop lag
};

class activity_recorder {
public:
    activity_recorder(boost::asio::any_io_executor executor, db::pg_pool& pool, activity_counters& counters,
                      const services::pop_waiters& waiters, activity_recorder_options options);
    void start();
    void stop();
    // Takes the counts so far and flushes them with any kept ones; never throws.
    boost::asio::awaitable<void> flush_now();

private:
    boost::asio::awaitable<void> sample_loop_lag();
    boost::asio::awaitable<void> sample_gauges();
    boost::asio::awaitable<void> flush_loop();

    boost::asio::any_io_executor executor_;
    db::pg_pool& pool_;
    activity_counters& counters_;
    const services::pop_waiters& waiters_;
    activity_recorder_options options_;
    std::shared_ptr<std::atomic<bool>> stopped_ = std::make_shared<std::atomic<bool>>(false);
    std::mutex unflushed_mutex_;
    std::deque<minute_activity> unflushed_;
};

// Unix µs of the start of the minute holding now.
std::int64_t current_minute_us();

}  // namespace queen::metrics
