#include "ledger.hpp"

#include <algorithm>
#include <map>

namespace queen::bench {

ledger::ledger(std::uint64_t expected)
    : capacity_(expected), expected_(expected), seen_(std::make_unique<std::atomic<std::uint8_t>[]>(expected)) {
    for (std::uint64_t i = 0; i < expected; ++i) seen_[i].store(0, std::memory_order_relaxed);
}

std::uint32_t ledger::intern_partition(const std::string& partition_id) {
    std::lock_guard lock(intern_mutex_);
    auto [it, inserted] = partitions_.try_emplace(partition_id, static_cast<std::uint32_t>(partitions_.size()));
    return it->second;
}

void ledger::set_expected(std::uint64_t n) { expected_.store(std::min(n, capacity_)); }

bool ledger::mark_delivered(std::uint64_t seq) {
    if (seq >= capacity_) return false;
    return seen_[seq].exchange(1) == 0;
}

void verdict::add(const verdict& o) {
    expected += o.expected;
    deliveries += o.deliveries;
    unique += o.unique;
    duplicates += o.duplicates;
    missing += o.missing;
    unexpected += o.unexpected;
    offset_order_violations += o.offset_order_violations;
    fifo_violations += o.fifo_violations;
    partitions_seen += o.partitions_seen;
}

verdict ledger::verify(std::vector<delivery> all, bool delivery_order_is_broker_order) const {
    const std::uint64_t expected = expected_.load();
    verdict v;
    v.expected = expected;
    v.deliveries = all.size();
    v.unexpected = unexpected_.load();

    std::vector<std::uint32_t> count(expected, 0);
    for (const auto& d : all) {
        if (d.seq < expected) ++count[d.seq];
        else if (d.seq < capacity_) ++v.unexpected;  // duration mode: a seq that was never sent
    }
    for (auto c : count) {
        if (c > 0) ++v.unique;
        if (c > 1) v.duplicates += c - 1;
    }
    v.missing = expected - v.unique;

    // Per partition, in broker order.
    std::sort(all.begin(), all.end(), [&](const delivery& a, const delivery& b) {
        if (a.partition != b.partition) return a.partition < b.partition;
        if (delivery_order_is_broker_order) {
            if (a.pop_ordinal != b.pop_ordinal) return a.pop_ordinal < b.pop_ordinal;
            return a.index < b.index;
        }
        if (a.offset != b.offset) return a.offset < b.offset;
        return a.pop_ordinal < b.pop_ordinal;
    });
    std::vector<bool> first_time(expected, true);
    std::size_t i = 0;
    while (i < all.size()) {
        const auto partition = all[i].partition;
        ++v.partitions_seen;
        std::int64_t last_offset = 0;
        bool have_offset = false;
        std::map<std::uint32_t, std::uint64_t> last_seq;  // per producer
        for (; i < all.size() && all[i].partition == partition; ++i) {
            const auto& d = all[i];
            // A redelivery is already counted as a duplicate; order is judged on first deliveries.
            if (d.seq < expected) {
                if (!first_time[d.seq]) continue;
                first_time[d.seq] = false;
            }
            if (have_offset && d.offset <= last_offset) ++v.offset_order_violations;
            last_offset = std::max(last_offset, d.offset);
            have_offset = true;
            auto [it, inserted] = last_seq.try_emplace(d.producer, d.seq);
            if (!inserted) {
                if (d.seq <= it->second) ++v.fifo_violations;
                it->second = std::max(it->second, d.seq);
            }
        }
    }
    return v;
}

}  // namespace queen::bench
