#include "store/pop_store.hpp"

#include "db/pg_binary.hpp"
#include "domain/message_id.hpp"
#include "segment/segment_codec.hpp"

#include <charconv>

namespace queen::store {

namespace asio = boost::asio;
using db::pg_param;

namespace {

// "3,5,8" (array_to_string of a bigint[]) as numbers.
std::vector<std::int64_t> offsets_of(std::string_view text) {
    std::vector<std::int64_t> out;
    while (!text.empty()) {
        const auto comma = text.find(',');
        const auto item = text.substr(0, comma);
        std::int64_t v = 0;
        std::from_chars(item.data(), item.data() + item.size(), v);
        out.push_back(v);
        if (comma == std::string_view::npos) break;
        text.remove_prefix(comma + 1);
    }
    return out;
}

}  // namespace

asio::awaitable<claimed_spans> claim_spans(db::pg_pool& pool, const pop_claim& c) {
    const std::string batch = std::to_string(c.batch), partitions = std::to_string(c.partitions);
    const std::string sub_at = c.subscription_at_us ? domain::iso_time(*c.subscription_at_us) : std::string();
    std::vector<pg_param> params{pg_param::text(c.queue),
                                 c.partition ? pg_param::text(*c.partition) : pg_param::null(),
                                 pg_param::text(c.consumer_group),
                                 pg_param::text(batch),
                                 pg_param::text(partitions),
                                 pg_param::text(c.auto_ack ? "true" : "false"),
                                 pg_param::text(c.subscribe_all ? "true" : "false"),
                                 c.subscription_at_us ? pg_param::text(sub_at) : pg_param::null()};
    auto res = co_await pool.exec(
        "SELECT partition_id, partition_name, lease_id, span_start, span_end, seg_first, seg_body, "
        "array_to_string(skip_offsets, ','), leases_expired, redelivered, lease_dead_letters, "
        "expired_dead_letters "
        "FROM queen.pop($1, $2, $3, $4::int, $5::int, $6::boolean, $7::boolean, $8::timestamptz)",
        params, db::result_format::binary);
    claimed_spans out;
    out.segments.reserve(static_cast<std::size_t>(res.rows()));
    for (int row = 0; row < res.rows(); ++row) {
        if (res.is_null(row, 0)) {  // the counts row, last
            out.counts = {res.int64(row, 8), res.int64(row, 9), res.int64(row, 10), res.int64(row, 11)};
            continue;
        }
        claimed_segment s{res.int64(row, 0), std::string(res.text(row, 1)),
                          std::nullopt,      res.int64(row, 3),
                          res.int64(row, 4), res.int64(row, 5),
                          res.text(row, 6),  {}};
        if (!res.is_null(row, 2)) s.lease_id = segment::uuid_to_string(db::uuid_bytes(res, row, 2));
        if (!res.is_null(row, 7)) s.skip_offsets = offsets_of(res.text(row, 7));
        out.segments.push_back(std::move(s));
    }
    out.result = std::move(res);
    co_return out;
}

asio::awaitable<void> release_lease(db::pg_pool& pool, const std::string& lease_id, const std::string& consumer_group) {
    std::vector<pg_param> params{pg_param::text(lease_id), pg_param::text(consumer_group)};
    co_await pool.exec("SELECT queen.release_lease($1::uuid, $2)", params);
}

}  // namespace queen::store
