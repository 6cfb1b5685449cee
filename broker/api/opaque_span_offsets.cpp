#include "api/opaque_span_offsets.hpp"

#include "api/validate.hpp"
#include "store/acks_store.hpp"
#include "segment/segment_codec.hpp"

#include <charconv>
#include <map>
#include <string>
#include <utility>

namespace queen::api {

boost::asio::awaitable<void> resolve_offsets_in_undecodable_spans(db::pg_pool& pool, std::vector<ack_item*> acks) {
    // The (partition, group) spans to read, and the acks waiting for each.
    std::map<std::pair<std::int64_t, std::string>, std::vector<ack_item*>> wanted;
    for (auto* a : acks) {
        if (a->offset) continue;
        if (auto pid = parse_partition_id(a->partition_id)) wanted[{*pid, a->consumer_group}].push_back(a);
    }
    if (wanted.empty()) co_return;
    std::vector<std::pair<std::int64_t, std::string>> keys;
    for (const auto& [key, _] : wanted) keys.push_back(key);
    const auto spans = co_await store::live_span_segments(pool, keys);
    std::map<ack_item*, std::int64_t> found;
    for (const auto& span : spans) {
        auto it = wanted.find({span.partition_id, span.consumer_group});
        if (it == wanted.end()) continue;
        const std::int64_t committed = span.committed, lease_end = span.lease_end, first = span.first_offset;
        auto segment = segment::decoded_segment::decode(std::string_view(span.body));
        const auto& frames = segment.frames();
        for (std::size_t i = 0; i < frames.size(); ++i) {
            const std::int64_t off = first + static_cast<std::int64_t>(i);
            if (off <= committed || off > lease_end) continue;
            for (auto* a : it->second) {
                if (frames[i].transaction_id != a->transaction_id) continue;
                auto [at, inserted] = found.emplace(a, off);
                if (!inserted && off < at->second) at->second = off;
            }
        }
    }
    for (auto [a, off] : found) a->offset = off;
}

}  // namespace queen::api
