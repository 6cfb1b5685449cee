#pragma once
// A broker-wide budget of bytes held at once by one kind of work (request bodies being parsed
// into JSON documents, docs/security.md). A ticket holds its bytes until it is destroyed.
#include <atomic>
#include <cstddef>
#include <optional>

namespace queen::util {

class memory_budget {
public:
    // Holds `bytes` of the budget until destroyed (or moved from).
    class ticket {
    public:
        ticket() = default;
        ticket(ticket&& other) noexcept : budget_(other.budget_), bytes_(other.bytes_) { other.budget_ = nullptr; }
        ticket& operator=(ticket&& other) noexcept;
        ticket(const ticket&) = delete;
        ticket& operator=(const ticket&) = delete;
        ~ticket() { release(); }

    private:
        friend class memory_budget;
        ticket(memory_budget* budget, std::size_t bytes) : budget_(budget), bytes_(bytes) {}
        void release() noexcept;
        memory_budget* budget_ = nullptr;
        std::size_t bytes_ = 0;
    };

    explicit memory_budget(std::size_t capacity) : capacity_(capacity) {}
    memory_budget(const memory_budget&) = delete;
    memory_budget& operator=(const memory_budget&) = delete;

    // A ticket for `bytes`, or nullopt when the bytes held would pass the capacity. A request
    // for more than the whole capacity gets a ticket only while nothing else is held, so that
    // it is served alone rather than never. Thread-safe.
    std::optional<ticket> try_take(std::size_t bytes);

    std::size_t capacity() const noexcept { return capacity_; }
    std::size_t in_use() const noexcept { return in_use_.load(std::memory_order_relaxed); }

private:
    const std::size_t capacity_;
    std::atomic<std::size_t> in_use_{0};
};

}  // namespace queen::util
