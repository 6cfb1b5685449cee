#include "tally.hpp"

#include "payload.hpp"

#include <algorithm>

namespace pgq_bench {

namespace {
constexpr std::uint32_t max_producer_id = 1u << 20;  // larger ids are not ours
}

tally::tally(std::uint64_t expected) : expected_(expected), seen_(expected, 0) {}

void tally::record(std::string_view payload) {
    ++delivered_;
    auto ids = parse_payload(payload);
    if (!ids || ids->seq >= expected_ || ids->producer >= max_producer_id) {
        ++unexpected_;
        return;
    }
    if (seen_[ids->seq]) {
        ++duplicates_;  // order is judged on first receipts only
        return;
    }
    seen_[ids->seq] = 1;
    ++unique_;
    if (ids->producer >= last_seq_.size()) last_seq_.resize(ids->producer + 1);
    auto& last = last_seq_[ids->producer];
    if (last && ids->seq < *last) ++order_violations_;
    last = std::max(last.value_or(0), ids->seq);
}

verdict tally::result() const {
    verdict v;
    v.expected = expected_;
    v.delivered = delivered_;
    v.unique = unique_;
    v.duplicates = duplicates_;
    v.missing = expected_ - unique_;
    v.unexpected = unexpected_;
    v.order_violations = order_violations_;
    return v;
}

}  // namespace pgq_bench
