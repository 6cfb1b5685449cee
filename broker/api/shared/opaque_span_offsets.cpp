#include "api/shared/opaque_span_offsets.hpp"

#include "api/shared/validate.hpp"
#include "segment/segment_reader.hpp"
#include "store/acks_store.hpp"

#include <utility>
#include <charconv>
#include <map>
#include <string>

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
        const segment::segment_reader reader(std::string_view(span.body), span.first_offset);
        reader.for_each_in_span(span.committed, span.lease_end, {},
                                [&](std::int64_t off, const segment::frame_view& f) {
                                    for (auto* a : it->second) {
                                        if (f.transaction_id != a->transaction_id) continue;
                                        auto [at, inserted] = found.emplace(a, off);
                                        if (!inserted && off < at->second) at->second = off;
                                    }
                                });
    }
    for (auto [a, off] : found) a->offset = off;
}

}  // namespace queen::api
