#include "api/opaque_span_offsets.hpp"

#include "db/pg_array.hpp"
#include "segment/segment_codec.hpp"

#include <charconv>
#include <map>
#include <string>
#include <utility>

namespace queen::api {

namespace {

std::int64_t positive_id(const std::string& s) {
    std::int64_t v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc{} && ptr == s.data() + s.size() && v > 0 ? v : 0;
}

}  // namespace

boost::asio::awaitable<void> resolve_offsets_in_undecodable_spans(db::pg_pool& pool, std::vector<ack_item*> acks) {
    // The (partition, group) spans to read, and the acks waiting for each.
    std::map<std::pair<std::int64_t, std::string>, std::vector<ack_item*>> wanted;
    for (auto* a : acks) {
        if (a->offset) continue;
        if (auto pid = positive_id(a->partition_id)) wanted[{pid, a->consumer_group}].push_back(a);
    }
    if (wanted.empty()) co_return;
    db::pg_array_builder pids, groups;
    for (const auto& [key, _] : wanted) {
        pids.add(key.first);
        groups.add(key.second);
    }
    const std::string a1 = pids.finish(), a2 = groups.finish();
    std::vector<db::pg_param> params{db::pg_param::text(a1), db::pg_param::text(a2)};
    auto res = co_await pool.exec(
        "SELECT k.pid, k.grp, c.committed, c.lease_end, s.first_offset, s.body "
        "FROM unnest($1::bigint[], $2::text[]) AS k(pid, grp) "
        "JOIN queen.log_consumers c ON c.partition_id = k.pid AND c.consumer_group = k.grp "
        "JOIN queen.log_segments s ON s.partition_id = k.pid AND s.last_offset > c.committed "
        "AND s.first_offset <= c.lease_end "
        "WHERE s.codec <> 0 AND c.lease_end IS NOT NULL",
        params, db::result_format::binary);
    std::map<ack_item*, std::int64_t> found;
    for (int row = 0; row < res.rows(); ++row) {
        auto it = wanted.find({res.int64(row, 0), std::string(res.text(row, 1))});
        if (it == wanted.end()) continue;
        const std::int64_t committed = res.int64(row, 2), lease_end = res.int64(row, 3), first = res.int64(row, 4);
        auto segment = segment::decoded_segment::decode(res.bytes(row, 5));
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
