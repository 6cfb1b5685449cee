#include "store/pop_store.hpp"

#include "db/pg_binary.hpp"
#include "domain/message_id.hpp"
#include "segment/segment_codec.hpp"

#include <charconv>
#include <stdexcept>

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

// The row of queen.pop's answer at `row`, whose columns start at `first` (partition_id, ...,
// expired_dead_letters, in the order both statements below select them), added to `out`.
void read_claim_row(const db::pg_result& res, int row, int first, claimed_spans& out) {
    if (res.is_null(row, first)) {  // the counts row, last
        out.counts = {res.int64(row, first + 8), res.int64(row, first + 9), res.int64(row, first + 10),
                      res.int64(row, first + 11)};
        return;
    }
    claimed_segment s{res.int64(row, first),
                      std::string(res.text(row, first + 1)),
                      std::nullopt,
                      res.int64(row, first + 3),
                      res.int64(row, first + 4),
                      res.int64(row, first + 5),
                      res.text(row, first + 6),
                      {}};
    if (!res.is_null(row, first + 2)) s.lease_id = segment::uuid_to_string(db::uuid_bytes(res, row, first + 2));
    if (!res.is_null(row, first + 7)) s.skip_offsets = offsets_of(res.text(row, first + 7));
    out.segments.push_back(std::move(s));
}

std::string subscription_text(const pop_claim& c) {
    return c.subscription_at_us ? domain::iso_time(*c.subscription_at_us) : std::string();
}

}  // namespace

asio::awaitable<claimed_spans> claim_spans(db::pg_pool& pool, const pop_claim& c) {
    if (!c.partition) {  // queen.pop would call queen.pop_fused with one request: save it the call
        const std::vector<fused_pop> one(1, fused_pop{c.batch, c.partitions});
        auto answers = co_await claim_spans_fused(pool, c, one);
        co_return std::move(answers.front());
    }
    const std::string batch = std::to_string(c.batch), partitions = std::to_string(c.partitions);
    const std::string sub_at = subscription_text(c);
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
    for (int row = 0; row < res.rows(); ++row) read_claim_row(res, row, 0, out);
    out.result = std::move(res);
    co_return out;
}

asio::awaitable<std::vector<claimed_spans>> claim_spans_fused(db::pg_pool& pool, const pop_claim& shape,
                                                              const std::vector<fused_pop>& requests) {
    std::string batches = "{", partitions = "{";
    for (const auto& r : requests) {
        if (batches.size() > 1) batches += ',', partitions += ',';
        batches += std::to_string(r.batch);
        partitions += std::to_string(r.partitions);
    }
    batches += '}', partitions += '}';
    const std::string sub_at = subscription_text(shape);
    std::vector<pg_param> params{pg_param::text(shape.queue),
                                 pg_param::text(shape.consumer_group),
                                 pg_param::text(batches),
                                 pg_param::text(partitions),
                                 pg_param::text(shape.auto_ack ? "true" : "false"),
                                 pg_param::text(shape.subscribe_all ? "true" : "false"),
                                 shape.subscription_at_us ? pg_param::text(sub_at) : pg_param::null()};
    auto res = co_await pool.exec(
        "SELECT request, partition_id, partition_name, lease_id, span_start, span_end, seg_first, seg_body, "
        "array_to_string(skip_offsets, ','), leases_expired, redelivered, lease_dead_letters, "
        "expired_dead_letters "
        "FROM queen.pop_fused($1, $2, $3::int[], $4::int[], $5::boolean, $6::boolean, $7::timestamptz)",
        params, db::result_format::binary);
    std::vector<claimed_spans> out(requests.size());
    for (int row = 0; row < res.rows(); ++row) {
        const auto request = res.int64(row, 0);
        if (request < 1 || static_cast<std::size_t>(request) > requests.size())
            throw std::runtime_error("queen.pop_fused answered for an unknown request");
        read_claim_row(res, row, 1, out[static_cast<std::size_t>(request - 1)]);
    }
    for (auto& spans : out) spans.result = res;  // the bodies stay in the one shared answer
    co_return out;
}

asio::awaitable<void> release_lease(db::pg_pool& pool, const std::string& lease_id, const std::string& consumer_group) {
    std::vector<pg_param> params{pg_param::text(lease_id), pg_param::text(consumer_group)};
    co_await pool.exec("SELECT queen.release_lease($1::uuid, $2)", params);
}

}  // namespace queen::store
