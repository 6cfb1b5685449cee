#include "producer_feed.hpp"

#include <algorithm>

namespace queen::bench {

producer_plan plan_producer(std::uint32_t id, std::uint64_t messages, std::uint64_t producers) {
    const std::uint64_t base = messages / producers, extra = messages % producers;
    producer_plan p;
    p.id = id;
    p.count = base + (id < extra ? 1 : 0);
    p.first_seq = id * base + std::min<std::uint64_t>(id, extra);
    return p;
}

seq_block seq_counter::take(std::uint64_t n) {
    std::uint64_t cur = next_.load();
    std::uint64_t count = 0;
    do {
        if (cur >= capacity_) return {cur, 0};
        count = std::min(n, capacity_ - cur);
    } while (!next_.compare_exchange_weak(cur, cur + count));
    return {cur, count};
}

std::uint64_t seq_counter::taken() const { return std::min(next_.load(), capacity_); }

producer_feed::producer_feed(producer_plan plan)
    : id_(plan.id), next_(plan.first_seq), end_(plan.first_seq + plan.count) {}

producer_feed::producer_feed(std::uint32_t id, seq_counter& shared, steady::time_point until)
    : id_(id), shared_(&shared), until_(until) {}

seq_block producer_feed::next(std::uint64_t max, steady::time_point now) {
    if (shared_) return now < until_ ? shared_->take(max) : seq_block{};
    const std::uint64_t n = std::min(max, end_ - next_);
    const seq_block b{next_, n};
    next_ += n;
    return b;
}

}  // namespace queen::bench
