#pragma once
// Parked long-poll pops, by queue name. A push (local, or on another broker via
// LISTEN/NOTIFY) wakes every pop parked on its queue; each wake callback only schedules
// work on the waiter's own strand.
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

namespace queen::services {

// Why a parked pop was woken: a push on this broker, a notification from another, or a
// (re)connection of the LISTEN connection after which every parked pop re-checks.
enum class wake_reason { push, notify, recheck };

class pop_waiters {
public:
    using wake_fn = std::function<void(wake_reason)>;

    std::uint64_t add(const std::string& queue, wake_fn fn);
    void remove(const std::string& queue, std::uint64_t id);
    void wake(const std::string& queue, wake_reason reason);
    void wake_all(wake_reason reason);
    std::size_t size() const;
    // Parked pops per queue, for the queues that have any.
    std::map<std::string, std::size_t, std::less<>> counts_by_queue() const;

private:
    mutable std::mutex mutex_;
    std::uint64_t next_id_ = 1;
    std::unordered_map<std::string, std::map<std::uint64_t, wake_fn>> by_queue_;
};

}  // namespace queen::services
