#include "store/acks_store.hpp"

#include "db/pg_array.hpp"
#include "store/ack_arrays.hpp"

#include <stdexcept>

namespace queen::store {

namespace asio = boost::asio;

asio::awaitable<std::vector<ack_outcome>> apply_acks(db::pg_pool& pool, const std::string& group,
                                                     const std::vector<ack_request>& acks) {
    detail::ack_arrays arrays_of;
    for (const auto& a : acks) arrays_of.add(a);
    const std::string arrays[] = {arrays_of.partition_ids.finish(), arrays_of.transaction_ids.finish(),
                                  arrays_of.offsets.finish(),       arrays_of.lease_ids.finish(),
                                  arrays_of.statuses.finish(),      arrays_of.errors.finish()};
    std::vector<db::pg_param> params{db::pg_param::text(group)};
    for (const auto& a : arrays) params.push_back(db::pg_param::text(a));
    auto res = co_await pool.exec(
        "SELECT item, success, msg_offset, noop, dlq, lease_released, error, queue_name "
        "FROM queen.ack($1, $2::bigint[], $3::text[], $4::bigint[], $5::uuid[], $6::text[], $7::text[])",
        params, db::result_format::binary);
    std::vector<ack_outcome> out;
    out.reserve(static_cast<std::size_t>(res.rows()));
    for (int row = 0; row < res.rows(); ++row) {
        ack_outcome o;
        const auto k = res.int64(row, 0);
        if (k < 1 || static_cast<std::size_t>(k) > acks.size())
            throw std::runtime_error("queen.ack returned an unknown item index");
        o.item = static_cast<std::size_t>(k);
        o.success = res.boolean(row, 1);
        if (!res.is_null(row, 2)) o.offset = res.int64(row, 2);
        o.noop = res.boolean(row, 3);
        o.dlq = res.boolean(row, 4);
        o.lease_released = res.boolean(row, 5);
        if (!res.is_null(row, 6)) o.error = std::string(res.text(row, 6));
        if (!res.is_null(row, 7)) o.queue_name = std::string(res.text(row, 7));
        out.push_back(std::move(o));
    }
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
