#include "services/housekeeper.hpp"

#include "store/maintenance_store.hpp"
#include "store/resources_store.hpp"

#include "log/log.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <optional>

namespace queen::services {

namespace asio = boost::asio;

std::chrono::steady_clock::time_point next_stats_refresh(std::chrono::steady_clock::time_point started,
                                                         std::chrono::steady_clock::time_point ended,
                                                         std::chrono::milliseconds interval) {
    return std::max(started + interval, ended + (ended - started) * (stats_duty_divisor - 1));
}

housekeeper::housekeeper(asio::any_io_executor executor, housekeeper_options options)
    : executor_(std::move(executor)), options_(std::move(options)) {
    db::pg_pool_options pool_options;
    pool_options.conninfo = options_.conninfo;
    pool_options.size = 1;
    pool_options.prepared_statements = options_.prepared_statements;
    pool_ = std::make_shared<db::pg_pool>(executor_, pool_options);
}

void housekeeper::start() {
    asio::co_spawn(executor_, run(), asio::detached);
}

void housekeeper::stop() {
    state_->stopped = true;
    pool_->close();
}

asio::awaitable<void> housekeeper::run() {
    auto st = state_;
    auto pool = pool_;
    std::optional<db::pooled_connection> conn;  // held while leader: the session owns the lock
    asio::steady_timer timer(executor_);
    const auto tick = std::min({options_.interval, options_.claim_floor_interval, options_.stats_interval});
    auto housekeeping_due = std::chrono::steady_clock::now() + options_.interval;
    auto stats_due = std::chrono::steady_clock::now();  // the first tick takes a snapshot
    while (!st->stopped) {
        timer.expires_after(tick);
        boost::system::error_code ec;
        co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        if (st->stopped) break;
        try {
            if (!conn) {
                auto c = co_await pool->acquire();
                if (!co_await store::try_lead_housekeeping(c)) continue;  // another broker leads; c returns to the pool
                conn.emplace(std::move(c));
                st->leader = true;
                log::info("housekeeping: this broker is the leader");
            }
            const auto floors = co_await store::raise_claim_floors(*conn);
            if (floors.skipped > 0)
                log::debug("claim floors: {} raised, {} queues busy", floors.raised, floors.skipped);
            if (std::chrono::steady_clock::now() >= stats_due) {
                const auto started = std::chrono::steady_clock::now();
                const auto stats = co_await store::refresh_stats(*conn, options_.stats_count_bytes);
                stats_due = next_stats_refresh(started, std::chrono::steady_clock::now(), options_.stats_interval);
                if (!stats.skipped)
                    log::debug("stats snapshot {}: {} partitions in {} ms", stats.snapshot_id, stats.partitions,
                               stats.duration_ms);
            }
            if (std::chrono::steady_clock::now() < housekeeping_due) continue;
            housekeeping_due = std::chrono::steady_clock::now() + options_.interval;
            const auto counts = co_await store::run_housekeeping(*conn, options_.group_idle, options_.partition_idle);
            log::debug("housekeeping: {}", counts.summary);
            if (options_.on_removed)
                for (const auto& r : counts.removed) options_.on_removed(r);
        } catch (const std::exception& e) {
            // A lost connection also lost the lock: compete again at the next tick.
            if (st->leader) log::warn("housekeeping: giving up leadership: {}", e.what());
            st->leader = false;
            conn.reset();
        }
    }
    conn.reset();
}

}  // namespace queen::services
