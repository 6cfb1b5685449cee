#include "store/traces_store.hpp"

#include "db/pg_array.hpp"
#include "db/pg_binary.hpp"
#include "segment/segment_codec.hpp"

namespace queen::store {

namespace asio = boost::asio;
using db::pg_param;

namespace {

// One trace from columns c..c+7: trace_id, partition_id, transaction_id, consumer_group,
// event_type, data::text, to_json(trace_names)::text, created_at.
trace trace_at(const db::pg_result& res, int row, int c) {
    trace t;
    t.trace_id = segment::uuid_to_string(db::uuid_bytes(res, row, c));
    t.partition_id = res.int64(row, c + 1);
    t.transaction_id = std::string(res.text(row, c + 2));
    t.consumer_group = std::string(res.text(row, c + 3));
    t.event_type = std::string(res.text(row, c + 4));
    t.data_json = std::string(res.text(row, c + 5));
    t.trace_names_json = std::string(res.text(row, c + 6));
    t.created_at_us = db::timestamp_us(res, row, c + 7);
    return t;
}

}  // namespace

asio::awaitable<std::optional<std::string>> record_trace(db::pg_pool& pool, const trace_record& record,
                                                         const std::optional<std::string>& scope) {
    db::pg_array_builder names;
    for (const auto& n : record.trace_names) names.add(n);
    const std::string pid_text = std::to_string(record.partition_id), names_text = names.finish();
    std::vector<pg_param> params{pg_param::text(pid_text),
                                 pg_param::text(record.transaction_id),
                                 pg_param::text(record.consumer_group),
                                 pg_param::text(record.event_type),
                                 pg_param::text(record.data_json),
                                 pg_param::text(names_text),
                                 scope ? pg_param::text(*scope) : pg_param::null()};
    auto res = co_await pool.exec(
        "SELECT queen.record_trace(queen.scoped_partition_id($1::bigint, $7), $2::text, $3::text, $4::text, $5::jsonb, "
        "$6::text[])",
        params, db::result_format::binary);
    if (res.rows() == 0 || res.is_null(0, 0)) co_return std::nullopt;
    co_return segment::uuid_to_string(db::uuid_bytes(res, 0, 0));
}

asio::awaitable<std::vector<trace>> message_traces_of(db::pg_pool& pool, std::int64_t partition_id,
                                                      const std::string& transaction_id,
                                                      const std::optional<std::string>& scope) {
    const std::string pid_text = std::to_string(partition_id);
    std::vector<pg_param> params{pg_param::text(pid_text), pg_param::text(transaction_id),
                                 scope ? pg_param::text(*scope) : pg_param::null()};
    auto res = co_await pool.exec(
        "SELECT t.trace_id, t.partition_id, t.transaction_id, t.consumer_group, t.event_type, t.data::text, "
        "to_json(t.trace_names)::text, t.created_at FROM queen.message_traces_of(queen.scoped_partition_id($1::bigint, "
        "$3), $2::text) t",
        params, db::result_format::binary);
    std::vector<trace> out;
    out.reserve(static_cast<std::size_t>(res.rows()));
    for (int row = 0; row < res.rows(); ++row) out.push_back(trace_at(res, row, 0));
    co_return out;
}

asio::awaitable<named_trace_page> traces_by_name(db::pg_pool& pool, const std::string& name, std::int64_t limit,
                                                 std::int64_t offset, const std::optional<std::string>& scope) {
    const std::string limit_text = std::to_string(limit), offset_text = std::to_string(offset);
    std::vector<pg_param> params{pg_param::text(name), pg_param::text(limit_text), pg_param::text(offset_text),
                                 scope ? pg_param::text(*scope) : pg_param::null()};
    auto res = co_await pool.exec(
        "SELECT c.total, t.trace_id, t.partition_id, t.transaction_id, t.consumer_group, t.event_type, t.data::text, "
        "to_json(t.trace_names)::text, t.created_at, t.queue, t.partition "
        "FROM queen.count_traces_by_name($1::text, $4::text) AS c(total) "
        "LEFT JOIN LATERAL queen.traces_by_name($1::text, $2::integer, $3::integer, $4::text) t ON true",
        params, db::result_format::binary);
    named_trace_page page;
    page.total = res.rows() > 0 ? res.int64(0, 0) : 0;
    for (int row = 0; row < res.rows(); ++row) {
        if (res.is_null(row, 1)) continue;  // an empty page: only the total
        page.traces.push_back(
            named_trace{trace_at(res, row, 1), db::opt_text(res, row, 9), db::opt_text(res, row, 10)});
    }
    co_return page;
}

asio::awaitable<trace_name_page> trace_names(db::pg_pool& pool, std::int64_t limit, std::int64_t offset,
                                             const std::optional<std::string>& scope) {
    const std::string limit_text = std::to_string(limit), offset_text = std::to_string(offset);
    std::vector<pg_param> params{pg_param::text(limit_text), pg_param::text(offset_text),
                                 scope ? pg_param::text(*scope) : pg_param::null()};
    auto res = co_await pool.exec(
        "SELECT c.total, n.trace_name, n.trace_count, n.message_count, n.last_seen "
        "FROM queen.count_trace_names($3::text) AS c(total) "
        "LEFT JOIN LATERAL queen.trace_names($1::integer, $2::integer, $3::text) n ON true",
        params, db::result_format::binary);
    trace_name_page page;
    page.total = res.rows() > 0 ? res.int64(0, 0) : 0;
    for (int row = 0; row < res.rows(); ++row) {
        if (res.is_null(row, 1)) continue;  // an empty page: only the total
        page.names.push_back(trace_name_stats{std::string(res.text(row, 1)), res.int64(row, 2), res.int64(row, 3),
                                              db::timestamp_us(res, row, 4)});
    }
    co_return page;
}

}  // namespace queen::store
