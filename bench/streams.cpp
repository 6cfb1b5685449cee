#include "streams.hpp"

namespace queen::bench {

stream_set::stream_set(std::size_t streams, std::uint64_t expected_each) {
    for (std::size_t i = 0; i < streams; ++i) ledgers_.push_back(std::make_unique<ledger>(expected_each));
}

std::uint64_t stream_set::completed() const {
    std::uint64_t n = 0;
    for (const auto& l : ledgers_) n += l->completed();
    return n;
}

std::uint64_t stream_set::expected() const {
    std::uint64_t n = 0;
    for (const auto& l : ledgers_) n += l->expected();
    return n;
}

bool stream_set::settle(std::size_t i, std::uint64_t n) {
    if (n == 0) return false;
    ledger& l = *ledgers_[i];
    const std::uint64_t now = l.add_completed(n);
    if (now - n >= l.expected() || now < l.expected()) return false;  // not the crossing
    return complete_.fetch_add(1) + 1 == ledgers_.size();
}

}  // namespace queen::bench
