#include "store/push_store.hpp"

#include "db/pg_array.hpp"
#include "db/pg_binary.hpp"
#include "domain/message_id.hpp"
#include "store/push_batch.hpp"

#include <stdexcept>
#include <string>

namespace queen::store {

namespace asio = boost::asio;
using db::pg_param;

namespace {

// The rows of a push call as outcomes per request of the batch, in item order.
std::vector<std::vector<domain::push_outcome>> read_pushed(
    const db::pg_result& res, const push_batch& batch,
    const std::vector<const std::vector<domain::push_item>*>& requests) {
    if (static_cast<std::size_t>(res.rows()) != batch.position.size())
        throw std::runtime_error("queen.push returned a different number of rows than items");
    std::vector<std::vector<domain::push_outcome>> out(requests.size());
    for (std::size_t r = 0; r < requests.size(); ++r) out[r].resize(requests[r]->size());
    for (int row = 0; row < res.rows(); ++row) {
        const auto [r, i] = position_of(batch, static_cast<std::size_t>(res.int64(row, 0)));
        auto& o = out[r][i];
        o.queued = res.text(row, 1) == "queued";
        o.partition_id = res.int64(row, 2);
        o.offset = res.int64(row, 3);
        if (!res.is_null(row, 4)) o.created_at_us = db::timestamp_us(res, row, 4);
    }
    return out;
}

std::vector<pg_param> batch_params(const push_batch& batch) {
    std::vector<pg_param> params;
    for (const auto& a : batch.arrays) params.push_back(pg_param::text(a));
    return params;
}

}  // namespace

asio::awaitable<std::vector<std::vector<domain::push_outcome>>> push(
    db::pg_pool& pool, const std::vector<const std::vector<domain::push_item>*>& requests) {
    const push_batch batch = make_push_batch(requests);
    auto res = co_await pool.exec(
        "SELECT item, status, partition_id, msg_offset, created_at FROM queen.push("
        "$1::text[], $2::text[], $3::int[], $4::text[], $5::uuid[], $6::text[], $7::text[])",
        batch_params(batch), db::result_format::binary);
    co_return read_pushed(res, batch, requests);
}

asio::awaitable<std::vector<domain::push_outcome>> push_spooled(
    db::pg_pool& pool, const std::vector<domain::push_item>& items,
    const std::vector<std::optional<std::int64_t>>& probe_since_us) {
    const std::vector<const std::vector<domain::push_item>*> requests{&items};
    const push_batch batch = make_push_batch(requests);
    // The probe times go in the batch's (grouped) order.
    db::pg_array_builder since;
    for (const auto& [r, i] : batch.position) {
        const std::optional<std::int64_t> t = i < probe_since_us.size() ? probe_since_us[i] : std::nullopt;
        if (t)
            since.add(std::string_view(domain::iso_time(*t)));
        else
            since.add_null();
    }
    const std::string since_array = since.finish();
    auto params = batch_params(batch);
    params.push_back(pg_param::text(since_array));
    auto res = co_await pool.exec(
        "SELECT item, status, partition_id, msg_offset, created_at FROM queen.push_spooled("
        "$1::text[], $2::text[], $3::int[], $4::text[], $5::uuid[], $6::text[], $7::text[], $8::timestamptz[])",
        params, db::result_format::binary);
    auto out = read_pushed(res, batch, requests);
    co_return std::move(out.front());
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
