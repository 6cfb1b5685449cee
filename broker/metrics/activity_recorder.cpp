#include "metrics/activity_recorder.hpp"

#include "log/log.hpp"
#include "metrics/process_usage.hpp"
#include "store/activity_store.hpp"
#include "util/wall_clock.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <sys/resource.h>

namespace queen::metrics {

namespace asio = boost::asio;

namespace {

constexpr std::size_t max_unflushed = 60;
constexpr std::int64_t minute_us = 60'000'000;

std::int64_t cpu_us(const timeval& t) {
    return static_cast<std::int64_t>(t.tv_sec) * 1'000'000 + t.tv_usec;
}

asio::awaitable<bool> sleep_for(asio::any_io_executor ex, std::chrono::steady_clock::duration d) {
    asio::steady_timer timer(ex, d);
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    co_return !ec;
}

}  // namespace

std::int64_t current_minute_us() {
    return util::wall_clock_us() / minute_us * minute_us;
}

activity_recorder::activity_recorder(asio::any_io_executor executor, db::pg_pool& pool, activity_counters& counters,
                                     const services::pop_waiters& waiters, activity_recorder_options options)
    : executor_(std::move(executor)),
      pool_(pool),
      counters_(counters),
      waiters_(waiters),
      options_(std::move(options)) {}

void activity_recorder::start() {
    asio::co_spawn(executor_, sample_loop_lag(), asio::detached);
    asio::co_spawn(executor_, sample_gauges(), asio::detached);
    asio::co_spawn(executor_, flush_loop(), asio::detached);
}

void activity_recorder::stop() {
    stopped_->store(true);
}

// The lateness of a 100 ms timer: how long ready work waited for an io thread.
asio::awaitable<void> activity_recorder::sample_loop_lag() {
    auto stopped = stopped_;
    const auto period = std::chrono::milliseconds(100);
    while (!stopped->load()) {
        const auto due = std::chrono::steady_clock::now() + period;
        asio::steady_timer timer(executor_, due);
        boost::system::error_code ec;
        co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        if (stopped->load()) break;
        const auto late = std::chrono::steady_clock::now() - due;
        counters_.loop_lag(std::chrono::duration<double, std::milli>(late).count());
        if (options_.on_loop_lag) options_.on_loop_lag(std::chrono::duration<double>(late).count());
    }
}

asio::awaitable<void> activity_recorder::sample_gauges() {
    auto stopped = stopped_;
    rusage previous{};
    getrusage(RUSAGE_SELF, &previous);
    auto previous_at = std::chrono::steady_clock::now();
    auto previous_pool = pool_.stats();
    while (!stopped->load()) {
        if (!co_await sleep_for(executor_, std::chrono::seconds(1)) || stopped->load()) break;
        rusage now{};
        getrusage(RUSAGE_SELF, &now);
        const auto at = std::chrono::steady_clock::now();
        const double wall = std::chrono::duration<double, std::micro>(at - previous_at).count();
        const auto pool = pool_.stats();
        const auto usage = read_process_usage();
        gauge_sample s;
        if (wall > 0) {
            s.cpu_user = static_cast<double>(cpu_us(now.ru_utime) - cpu_us(previous.ru_utime)) / wall * 10000.0;
            s.cpu_system = static_cast<double>(cpu_us(now.ru_stime) - cpu_us(previous.ru_stime)) / wall * 10000.0;
        }
        s.rss_bytes = usage.resident_bytes;
        s.virtual_bytes = usage.virtual_bytes;
        s.pool_size = static_cast<double>(pool.size);
        s.pool_idle = static_cast<double>(pool.idle);
        s.pool_active = static_cast<double>(pool.open - std::min(pool.open, pool.idle));
        s.pool_waiting = static_cast<double>(pool.waiting);
        s.background_jobs = options_.background_jobs ? static_cast<double>(options_.background_jobs()) : 0.0;
        s.db_calls = static_cast<std::int64_t>(pool.statements_completed - previous_pool.statements_completed);
        s.db_errors = static_cast<std::int64_t>(pool.statements_failed - previous_pool.statements_failed);
        const auto parked = waiters_.counts_by_queue();
        for (const auto& [queue, n] : parked) s.parked += static_cast<double>(n);
        counters_.sample(s, parked);
        previous = now;
        previous_at = at;
        previous_pool = pool;
    }
}

asio::awaitable<void> activity_recorder::flush_loop() {
    auto stopped = stopped_;
    const bool by_minute = options_.flush_interval == std::chrono::minutes(1);
    while (!stopped->load()) {
        auto wait = std::chrono::duration_cast<std::chrono::steady_clock::duration>(options_.flush_interval);
        if (by_minute) {
            // Just past the next minute boundary, so the minute's counts go out whole.
            const std::int64_t next = current_minute_us() + minute_us;
            wait = std::chrono::microseconds(next - util::wall_clock_us() + 200'000);
        }
        if (!co_await sleep_for(executor_, wait) || stopped->load()) break;
        co_await flush_now();
    }
}

asio::awaitable<void> activity_recorder::flush_now() {
    {
        std::lock_guard lock(unflushed_mutex_);
        unflushed_.push_back(counters_.take(current_minute_us()));
        while (unflushed_.size() > max_unflushed) {
            log::warn("activity: dropping the unflushed counts of one minute (the database refused them for an hour)");
            unflushed_.pop_front();
        }
    }
    for (;;) {
        minute_activity next;
        {
            std::lock_guard lock(unflushed_mutex_);
            if (unflushed_.empty()) co_return;
            next = std::move(unflushed_.front());
            unflushed_.pop_front();
        }
        bool failed = false;
        try {
            co_await store::flush_activity(pool_, activity_document(next, options_.broker, options_.retention_days));
        } catch (const std::exception& e) {
            log::warn("activity: flush failed ({}); kept for the next flush", e.what());
            failed = true;
        }
        if (failed) {
            std::lock_guard lock(unflushed_mutex_);
            unflushed_.push_front(std::move(next));
            co_return;
        }
    }
}

}  // namespace queen::metrics
