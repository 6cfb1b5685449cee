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

namespace queen::core {

class pop_waiters {
public:
    using wake_fn = std::function<void()>;

    std::uint64_t add(const std::string& queue, wake_fn fn);
    void remove(const std::string& queue, std::uint64_t id);
    void wake(const std::string& queue);
    void wake_all();
    std::size_t size() const;
    // Parked pops per queue, for the queues that have any.
    std::map<std::string, std::size_t, std::less<>> counts_by_queue() const;

private:
    mutable std::mutex mutex_;
    std::uint64_t next_id_ = 1;
    std::unordered_map<std::string, std::map<std::uint64_t, wake_fn>> by_queue_;
};

}  // namespace queen::core
