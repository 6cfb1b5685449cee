#include "maintenance/maintenance_flags.hpp"

#include "log/log.hpp"
#include "store/boot_store.hpp"
#include "store/maintenance_store.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <nlohmann/json.hpp>

#include <libpq-fe.h>

#include <stdexcept>

namespace queen::maintenance {

namespace asio = boost::asio;

flags_snapshot maintenance_flags::load(const std::string& conninfo) {
    auto state = store::read_maintenance_at_boot(conninfo);
    return flags_snapshot{state.push, state.pop, std::move(state.database_id)};
}

maintenance_flags::maintenance_flags(asio::any_io_executor executor, db::pg_pool& pool, flags_snapshot initial,
                                     std::chrono::milliseconds refresh)
    : executor_(std::move(executor)), pool_(pool), refresh_(refresh), database_id_(std::move(initial.database_id)) {
    state_->push = initial.push;
    state_->pop = initial.pop;
}

maintenance_flags::~maintenance_flags() {
    state_->stopped = true;
}

void maintenance_flags::on_push_resumed(std::function<void()> callback) {
    std::lock_guard lock(state_->mu);
    state_->push_resumed = std::move(callback);
}

void maintenance_flags::apply(const std::shared_ptr<state>& st, bool push, bool pop) {
    bool was_push = st->push.exchange(push);
    bool was_pop = st->pop.exchange(pop);
    if (was_push != push) log::info("maintenance: push maintenance {}", push ? "ON: pushes go to the spool" : "OFF");
    if (was_pop != pop) log::info("maintenance: pop maintenance {}", pop ? "ON: every pop answers 204" : "OFF");
    if (was_push && !push) {
        std::function<void()> cb;
        {
            std::lock_guard lock(st->mu);
            cb = st->push_resumed;
        }
        if (cb) cb();
    }
}

void maintenance_flags::start() {
    asio::co_spawn(executor_, run(), asio::detached);
}

void maintenance_flags::stop() {
    state_->stopped = true;
}

void maintenance_flags::refresh_soon() {
    state_->refresh_now = true;
}

void maintenance_flags::on_notification(const std::string& payload) {
    try {
        auto j = nlohmann::json::parse(payload);
        if (j.contains("push") && j["push"].is_boolean() && j.contains("pop") && j["pop"].is_boolean()) {
            state_->changes.fetch_add(1);
            apply(state_, j["push"].get<bool>(), j["pop"].get<bool>());
            return;
        }
    } catch (const std::exception&) {
    }
    log::warn("maintenance: ignoring a malformed notification: {}", payload);
    refresh_soon();
}

asio::awaitable<void> maintenance_flags::run() {
    auto st = state_;
    asio::steady_timer timer(executor_);
    bool failing = false;
    auto next = std::chrono::steady_clock::now() + refresh_;
    while (!st->stopped) {
        // Sleep in short steps so that refresh_soon() is honoured quickly.
        timer.expires_after(std::min<std::chrono::steady_clock::duration>(std::chrono::milliseconds(100), refresh_));
        boost::system::error_code ec;
        co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        if (st->stopped) break;
        if (!st->refresh_now.exchange(false) && std::chrono::steady_clock::now() < next) continue;
        next = std::chrono::steady_clock::now() + refresh_;
        try {
            const std::uint64_t changes_before = st->changes.load();
            const auto flags = co_await store::read_maintenance(pool_);
            if (st->stopped) break;
            // A set or a notification while the read ran is newer than what it read.
            if (st->changes.load() == changes_before) apply(st, flags.push, flags.pop);
            if (failing) log::info("maintenance: flags readable again");
            failing = false;
        } catch (const std::exception& e) {
            if (!failing) log::warn("maintenance: cannot read the flags ({}); keeping the last known ones", e.what());
            failing = true;
        }
    }
}

asio::awaitable<void> maintenance_flags::set(std::optional<bool> push, std::optional<bool> pop) {
    const auto flags = co_await store::set_maintenance(pool_, push, pop);
    state_->changes.fetch_add(1);
    apply(state_, flags.push, flags.pop);
}

asio::awaitable<bool> maintenance_flags::wait_pop_resumed(std::chrono::steady_clock::time_point deadline) {
    auto executor = co_await asio::this_coro::executor;
    asio::steady_timer timer(executor);
    while (state_->pop.load()) {
        auto now = std::chrono::steady_clock::now();
        if (now >= deadline) co_return false;
        timer.expires_at(std::min(deadline, now + std::chrono::milliseconds(100)));
        boost::system::error_code ec;
        co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    co_return true;
}

}  // namespace queen::maintenance
