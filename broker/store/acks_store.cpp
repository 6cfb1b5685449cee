#include "store/acks_store.hpp"

#include "db/pg_array.hpp"
#include "store/ack_arrays.hpp"

#include <algorithm>
#include <stdexcept>

namespace queen::store {

namespace asio = boost::asio;

namespace {

// The six arrays of the acks, as text parameters after the leading ones.
void add_ack_arrays(std::vector<db::pg_param>& params, std::vector<std::string>& texts,
                    const std::vector<const std::vector<ack_request>*>& requests) {
    detail::ack_arrays arrays_of;
    for (const auto* r : requests)
        for (const auto& a : *r) arrays_of.add(a);
    texts = {arrays_of.partition_ids.finish(), arrays_of.transaction_ids.finish(), arrays_of.offsets.finish(),
             arrays_of.lease_ids.finish(),     arrays_of.statuses.finish(),        arrays_of.errors.finish()};
    for (const auto& a : texts) params.push_back(db::pg_param::text(a));
}

// One row of queen.ack's answer; item is the row's 1-based position in the call, checked
// against its size.
ack_outcome outcome_of(const db::pg_result& res, int row, std::size_t call_size) {
    ack_outcome o;
    const auto k = res.int64(row, 0);
    if (k < 1 || static_cast<std::size_t>(k) > call_size)
        throw std::runtime_error("queen.ack returned an unknown item index");
    o.item = static_cast<std::size_t>(k);
    o.success = res.boolean(row, 1);
    if (!res.is_null(row, 2)) o.offset = res.int64(row, 2);
    o.noop = res.boolean(row, 3);
    o.dlq = res.boolean(row, 4);
    o.lease_released = res.boolean(row, 5);
    if (!res.is_null(row, 6)) o.error = std::string(res.text(row, 6));
    if (!res.is_null(row, 7)) o.queue_name = std::string(res.text(row, 7));
    return o;
}

// The partition-id argument at parameter `at`: as sent without a tenant scope, else through
// queen.scoped_partition_ids with the scope as the last parameter `scope_at`.
std::string partition_ids_argument(const std::optional<std::string>& scope, int at, int scope_at) {
    const std::string ids = "$" + std::to_string(at) + "::bigint[]";
    if (!scope) return ids;
    return "queen.scoped_partition_ids(" + ids + ", $" + std::to_string(scope_at) + ")";
}

}  // namespace

asio::awaitable<std::vector<ack_outcome>> apply_acks(db::pg_pool& pool, const std::string& group,
                                                     const std::vector<ack_request>& acks,
                                                     const std::optional<std::string>& scope) {
    std::vector<db::pg_param> params{db::pg_param::text(group)};
    std::vector<std::string> texts;
    add_ack_arrays(params, texts, {&acks});
    if (scope) params.push_back(db::pg_param::text(*scope));
    const std::string sql =
        "SELECT item, success, msg_offset, noop, dlq, lease_released, error, queue_name FROM queen.ack($1, " +
        partition_ids_argument(scope, 2, 8) + ", $3::text[], $4::bigint[], $5::uuid[], $6::text[], $7::text[])";
    auto res = co_await pool.exec(sql, params, db::result_format::binary);
    std::vector<ack_outcome> out;
    out.reserve(static_cast<std::size_t>(res.rows()));
    for (int row = 0; row < res.rows(); ++row) out.push_back(outcome_of(res, row, acks.size()));
    co_return out;
}

asio::awaitable<std::vector<std::optional<std::vector<ack_outcome>>>> apply_fused_acks(
    db::pg_pool& pool, const std::string& group, const std::vector<const std::vector<ack_request>*>& requests,
    const std::optional<std::string>& scope) {
    db::pg_array_builder request_of;
    std::vector<std::size_t> start;  // position of each request's first ack in the call, 0-based
    std::size_t total = 0;
    for (std::size_t r = 0; r < requests.size(); ++r) {
        start.push_back(total);
        for (std::size_t j = 0; j < requests[r]->size(); ++j) request_of.add(static_cast<std::int64_t>(r));
        total += requests[r]->size();
    }
    const std::string request_array = request_of.finish();
    std::vector<db::pg_param> params{db::pg_param::text(group), db::pg_param::text(request_array)};
    std::vector<std::string> texts;
    add_ack_arrays(params, texts, requests);
    if (scope) params.push_back(db::pg_param::text(*scope));
    const std::string sql =
        "SELECT item, success, msg_offset, noop, dlq, lease_released, error, queue_name "
        "FROM queen.ack_fused($1, $2::int[], " +
        partition_ids_argument(scope, 3, 9) + ", $4::text[], $5::bigint[], $6::uuid[], $7::text[], $8::text[])";
    auto res = co_await pool.exec(sql, params, db::result_format::binary);
    std::vector<std::optional<std::vector<ack_outcome>>> out(requests.size());
    for (int row = 0; row < res.rows(); ++row) {
        auto o = outcome_of(res, row, total);
        // The request holding position o.item, and the position inside it.
        const auto r =
            static_cast<std::size_t>(std::upper_bound(start.begin(), start.end(), o.item - 1) - start.begin()) - 1;
        o.item -= start[r];
        if (!out[r]) out[r].emplace();
        out[r]->push_back(std::move(o));
    }
    for (std::size_t r = 0; r < requests.size(); ++r)
        if (out[r] && out[r]->size() != requests[r]->size())
            throw std::runtime_error("queen.ack_fused answered part of a request");
    co_return out;
}

asio::awaitable<std::vector<live_span_segment>> live_span_segments(
    db::pg_pool& pool, const std::vector<std::pair<std::int64_t, std::string>>& partition_groups) {
    db::pg_array_builder pids, groups;
    for (const auto& [pid, group] : partition_groups) {
        pids.add(pid);
        groups.add(group);
    }
    const std::string a1 = pids.finish(), a2 = groups.finish();
    std::vector<db::pg_param> params{db::pg_param::text(a1), db::pg_param::text(a2)};
    auto res = co_await pool.exec(
        "SELECT partition_id, consumer_group, committed, lease_end, first_offset, body "
        "FROM queen.live_span_segments($1::bigint[], $2::text[])",
        params, db::result_format::binary);
    std::vector<live_span_segment> out;
    for (int row = 0; row < res.rows(); ++row)
        out.push_back({res.int64(row, 0), std::string(res.text(row, 1)), res.int64(row, 2), res.int64(row, 3),
                       res.int64(row, 4), std::string(res.text(row, 5))});
    co_return out;
}

}  // namespace queen::store
