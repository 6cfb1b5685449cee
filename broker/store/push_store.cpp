#include "store/push_store.hpp"

#include "core/message_id.hpp"
#include "db/pg_array.hpp"
#include "db/pg_binary.hpp"

namespace queen::store {

namespace asio = boost::asio;
using db::pg_param;

namespace {

std::vector<pushed_item> read_pushed(const db::pg_result& res) {
    std::vector<pushed_item> out;
    out.reserve(static_cast<std::size_t>(res.rows()));
    for (int row = 0; row < res.rows(); ++row) {
        pushed_item p;
        p.item = static_cast<std::size_t>(res.int64(row, 0));
        p.queued = res.text(row, 1) == "queued";
        p.partition_id = res.int64(row, 2);
        p.offset = res.int64(row, 3);
        if (!res.is_null(row, 4)) p.created_at_us = db::timestamp_us(res, row, 4);
        out.push_back(p);
    }
    return out;
}

}  // namespace

asio::awaitable<std::vector<pushed_item>> push(db::pg_pool& pool, const core::push_batch& batch) {
    std::vector<pg_param> params;
    for (const auto& a : batch.arrays) params.push_back(pg_param::text(a));
    auto res = co_await pool.exec(
        "SELECT item, status, partition_id, msg_offset, created_at FROM queen.push("
        "$1::text[], $2::text[], $3::int[], $4::text[], $5::uuid[], $6::text[], $7::text[])",
        params, db::result_format::binary);
    co_return read_pushed(res);
}

asio::awaitable<std::vector<pushed_item>> push_spooled(db::pg_pool& pool, const core::push_batch& batch,
                                                      const std::vector<std::optional<std::int64_t>>& probe_since_us) {
    db::pg_array_builder since;
    for (const auto& t : probe_since_us) {
        if (t) since.add(std::string_view(core::iso_time(*t)));
        else since.add_null();
    }
    const std::string since_array = since.finish();
    std::vector<pg_param> params;
    for (const auto& a : batch.arrays) params.push_back(pg_param::text(a));
    params.push_back(pg_param::text(since_array));
    auto res = co_await pool.exec(
        "SELECT item, status, partition_id, msg_offset, created_at FROM queen.push_spooled("
        "$1::text[], $2::text[], $3::int[], $4::text[], $5::uuid[], $6::text[], $7::text[], $8::timestamptz[])",
        params, db::result_format::binary);
    co_return read_pushed(res);
}

asio::awaitable<void> notify_brokers(db::pg_pool& pool, const std::string& channel,
                                     const std::vector<std::string>& payloads) {
    db::pg_array_builder array;
    for (const auto& p : payloads) array.add(p);
    const std::string literal = array.finish();
    std::vector<pg_param> params{pg_param::text(channel), pg_param::text(literal)};
    co_await pool.exec("SELECT queen.notify_brokers($1, $2::text[])", params);
}

}  // namespace queen::store
