#pragma once
// Wake-ups for parked pops. After a commit that made messages claimable, the queue names are
// handed here: local waiters wake at once, and other brokers are told through pg_notify,
// coalesced and sent from outside the fused commit (pg_notify serializes commits).
#include "db/pg_pool.hpp"
#include "services/pop_waiters.hpp"

#include <utility>
#include <boost/asio/any_io_executor.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace queen::services {

class push_notifier {
public:
    static constexpr const char* channel = "queen_push";

    push_notifier(boost::asio::any_io_executor executor, db::pg_pool& pool, pop_waiters& waiters,
                  std::string instance_id);

    // Queues that gained claimable messages (a push, a released lease).
    void queues_changed(const std::vector<std::string>& queues);
    // A notification payload received by the listener.
    void on_notification(const std::string& payload);
    // Notifications sent to other brokers, and received from them, since start.
    std::uint64_t sent() const noexcept { return sent_.load(std::memory_order_relaxed); }
    std::uint64_t received() const noexcept { return received_.load(std::memory_order_relaxed); }

private:
    boost::asio::awaitable<void> send_pending();

    boost::asio::any_io_executor executor_;
    db::pg_pool& pool_;
    pop_waiters& waiters_;
    std::string instance_id_;
    std::mutex mutex_;
    std::set<std::string> pending_;
    bool sending_ = false;
    std::atomic<std::uint64_t> sent_{0}, received_{0};
};

}  // namespace queen::services
