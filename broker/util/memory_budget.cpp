#include "util/memory_budget.hpp"

namespace queen::util {

memory_budget::ticket& memory_budget::ticket::operator=(ticket&& other) noexcept {
    if (this != &other) {
        release();
        budget_ = other.budget_;
        bytes_ = other.bytes_;
        other.budget_ = nullptr;
    }
    return *this;
}

void memory_budget::ticket::release() noexcept {
    if (budget_) budget_->in_use_.fetch_sub(bytes_, std::memory_order_relaxed);
    budget_ = nullptr;
}

std::optional<memory_budget::ticket> memory_budget::try_take(std::size_t bytes) {
    std::size_t held = in_use_.load(std::memory_order_relaxed);
    for (;;) {
        const bool fits = bytes <= capacity_ && held <= capacity_ - bytes;
        if (!fits && held != 0) return std::nullopt;
        if (in_use_.compare_exchange_weak(held, held + bytes, std::memory_order_relaxed)) break;
    }
    return ticket(this, bytes);
}

}  // namespace queen::util
