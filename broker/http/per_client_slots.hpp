#pragma once
// How many of something (open connections, parked long-polls) each client address holds,
// against one limit. Thread-safe; a slot given out stays valid after this object is gone.
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace queen::http {

class per_client_slots {
    struct state {
        std::mutex mu;
        std::unordered_map<std::string, std::size_t> held;
    };

public:
    // limit 0: unlimited (try_take always succeeds and counts nothing).
    explicit per_client_slots(std::size_t limit) : limit_(limit) {}

    // One held slot; given back when destroyed.
    class slot {
    public:
        slot(std::shared_ptr<state> s, std::string address) : state_(std::move(s)), address_(std::move(address)) {}
        slot(slot&&) noexcept = default;
        slot& operator=(slot&&) noexcept = default;
        slot(const slot&) = delete;
        slot& operator=(const slot&) = delete;
        ~slot();

    private:
        std::shared_ptr<state> state_;  // null: nothing to give back
        std::string address_;
    };

    // A slot for `address`, or none when it already holds `limit` of them.
    std::optional<slot> try_take(const std::string& address);

    // Slots `address` holds now.
    std::size_t held(const std::string& address) const;

    std::size_t limit() const noexcept { return limit_; }

private:
    std::size_t limit_;
    std::shared_ptr<state> state_ = std::make_shared<state>();
};

}  // namespace queen::http
