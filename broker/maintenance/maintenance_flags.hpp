#pragma once
// The push/pop maintenance flags (docs/maintenance-and-spool.md), stored in the database
// (queen.maintenance_settings) and cached here, so that checking them costs nothing on the
// request path. Every broker re-reads them every `refresh` (1 s by default) and applies a
// change at once when the LISTEN connection delivers the notification that
// queen.set_maintenance() sends: a change reaches every broker within milliseconds, and
// within `refresh` (plus one query) when a notification is missed. While the database is
// unreachable the last known flags stay in force.
#include "db/pg_pool.hpp"

#include <utility>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace queen::maintenance {

struct flags_snapshot {
    bool push = false;
    bool pop = false;
    std::string database_id;  // "" when the database has no maintenance table (older schema)
};

class maintenance_flags {
public:
    static constexpr const char* channel = "queen_maintenance";

    // Reads the flags and the database identity synchronously (start-up, before serving).
    // Returns all-off and an empty id when the table does not exist (QUEEN_APPLY_SCHEMA=0
    // against an older schema); throws std::runtime_error when the database cannot be read.
    static flags_snapshot load(const std::string& conninfo);

    maintenance_flags(boost::asio::any_io_executor executor, db::pg_pool& pool, flags_snapshot initial,
                      std::chrono::milliseconds refresh);
    ~maintenance_flags();

    bool push_paused() const noexcept { return state_->push.load(); }
    bool pop_paused() const noexcept { return state_->pop.load(); }
    const std::string& database_id() const noexcept { return database_id_; }

    // Called (on some executor thread) whenever the push flag goes from on to off.
    void on_push_resumed(std::function<void()> callback);

    void start();
    void stop();
    // A notification payload {"push":bool,"pop":bool} received on `channel`.
    void on_notification(const std::string& payload);
    // Re-read soon (e.g. after the LISTEN connection reconnected).
    void refresh_soon();

    // Writes a flag (std::nullopt keeps it) and applies the result here at once; throws
    // db::pg_error (connection_lost when the database is unreachable).
    boost::asio::awaitable<void> set(std::optional<bool> push, std::optional<bool> pop);

    // A pop that arrived during pop maintenance: waits until pop maintenance ends or the
    // deadline passes (re-checking every 100 ms); true when it ended.
    boost::asio::awaitable<bool> wait_pop_resumed(std::chrono::steady_clock::time_point deadline);

private:
    struct state {
        std::atomic<bool> push{false};
        std::atomic<bool> pop{false};
        std::atomic<bool> stopped{false};
        std::atomic<bool> refresh_now{false};
        // Bumped by every change known to be newer than any read in flight (a set, a
        // notification): a periodic read that began before it must not apply its older flags.
        std::atomic<std::uint64_t> changes{0};
        std::mutex mu;
        std::function<void()> push_resumed;
    };
    static void apply(const std::shared_ptr<state>& st, bool push, bool pop);
    boost::asio::awaitable<void> run();

    boost::asio::any_io_executor executor_;
    db::pg_pool& pool_;
    std::chrono::milliseconds refresh_;
    std::string database_id_;
    std::shared_ptr<state> state_ = std::make_shared<state>();
};

}  // namespace queen::maintenance
