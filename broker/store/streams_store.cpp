#include "store/streams_store.hpp"

#include "db/pg_array.hpp"
#include "store/push_batch.hpp"

#include <nlohmann/json.hpp>

namespace queen::store {

using nlohmann::json;

boost::asio::awaitable<stream_registration> register_stream_query(db::pg_pool& pool, const std::string& name,
                                                                  const std::string& source_queue,
                                                                  const std::optional<std::string>& sink_queue,
                                                                  const std::string& config_hash, bool reset) {
    const std::vector<db::pg_param> params{db::pg_param::text(name), db::pg_param::text(source_queue),
                                           sink_queue ? db::pg_param::text(*sink_queue) : db::pg_param::null(),
                                           db::pg_param::text(config_hash), db::pg_param::text(reset ? "t" : "f")};
    auto res = co_await pool.exec(
        "SELECT query_id, fresh, reset, conflict FROM queen.stream_register($1, $2, $3, $4, $5::boolean)", params);
    co_return stream_registration{std::string(res.text(0, 0)), res.boolean(0, 1), res.boolean(0, 2), res.boolean(0, 3)};
}

boost::asio::awaitable<std::vector<stream_state_row>> stream_state(db::pg_pool& pool, const std::string& query_id,
                                                                   std::int64_t partition_id,
                                                                   const stream_state_filter& filter,
                                                                   const std::optional<std::string>& scope) {
    db::pg_array_builder keys;
    for (const auto& k : filter.keys) keys.add(k);
    const std::string keys_literal = keys.finish();
    const std::string pid = std::to_string(partition_id);
    const std::vector<db::pg_param> params{
        db::pg_param::text(query_id),
        db::pg_param::text(pid),
        db::pg_param::text(keys_literal),
        filter.key_prefix ? db::pg_param::text(*filter.key_prefix) : db::pg_param::null(),
        filter.ripe_at_or_before ? db::pg_param::text(*filter.ripe_at_or_before) : db::pg_param::null(),
        scope ? db::pg_param::text(*scope) : db::pg_param::null()};
    auto res = co_await pool.exec(
        "SELECT key, value::text, (extract(epoch FROM updated_at) * 1000000)::bigint "
        "FROM queen.stream_state_get($1::uuid, $2::bigint, $3::text[], $4, $5::numeric, $6)",
        params);
    std::vector<stream_state_row> rows;
    rows.reserve(static_cast<std::size_t>(res.rows()));
    for (int r = 0; r < res.rows(); ++r)
        rows.push_back(stream_state_row{std::string(res.text(r, 0)), std::string(res.text(r, 1)), res.int64(r, 2)});
    co_return rows;
}

namespace {

// queen.stream_cycle's answer (sql/procedures/97_streams.sql) as a struct; push rows are placed
// at their item of the request.
stream_cycle_outcome read_cycle(const json& j, const push_batch& batch, std::size_t items) {
    stream_cycle_outcome out;
    out.success = j.value("success", false);
    if (!out.success) {
        out.error = j.value("error", std::string("the cycle failed"));
        return out;
    }
    out.applied = j.value("applied", true);
    out.state_ops_applied = j.value("state_ops_applied", std::size_t{0});
    if (auto q = j.find("source_queue"); q != j.end() && q->is_string()) out.source_queue = q->get<std::string>();
    // A replay pushed nothing: it answers no push rows.
    out.push.resize(out.applied ? items : 0);
    out.push_transaction_ids.resize(out.push.size());
    for (const auto& row : j.value("push", json::array())) {
        const auto i = position_of(batch, row.at("item").get<std::size_t>()).second;
        out.push[i] = domain::push_outcome{row.at("status").get<std::string>() == "queued",
                                           row.at("partition_id").get<std::int64_t>(),
                                           row.at("offset").get<std::int64_t>(), std::nullopt};
        out.push_transaction_ids[i] = row.at("transaction_id").get<std::string>();
    }
    if (auto a = j.find("ack"); a != j.end() && a->is_object()) {
        out.acked = true;
        out.ack_noop = a->value("noop", false);
        out.ack_dlq = a->value("dlq", false);
        out.lease_released = a->value("lease_released", false);
    }
    return out;
}

}  // namespace

boost::asio::awaitable<stream_cycle_outcome> run_stream_cycle(db::pg_pool& pool, const stream_cycle_call& call,
                                                              const std::optional<std::string>& scope) {
    db::pg_array_builder types, keys, values, derive;
    for (const auto& op : call.state_ops) {
        types.add(std::string_view(op.upsert ? "upsert" : "delete"));
        keys.add(op.key);
        op.upsert ? values.add(op.value) : values.add_null();
    }
    const std::vector<const std::vector<domain::push_item>*> requests{&call.push_items};
    const push_batch batch = make_push_batch(requests);
    for (const auto& [request, item] : batch.position) {
        if (item < call.derive_transaction_id.size() && call.derive_transaction_id[item])
            derive.add(static_cast<std::int64_t>(item));
        else
            derive.add_null();
    }
    const std::string literals[] = {types.finish(), keys.finish(), values.finish(), derive.finish()};
    const std::string pid = std::to_string(call.partition_id);
    const auto& ack = call.ack;
    const std::string ack_offset = ack && ack->offset ? std::to_string(*ack->offset) : std::string();
    std::vector<db::pg_param> params{db::pg_param::text(call.query_id),       db::pg_param::text(pid),
                                     db::pg_param::text(call.consumer_group), db::pg_param::text(literals[0]),
                                     db::pg_param::text(literals[1]),         db::pg_param::text(literals[2])};
    for (const auto& a : batch.arrays) params.push_back(db::pg_param::text(a));
    params.push_back(db::pg_param::text(literals[3]));
    params.push_back(ack ? db::pg_param::text(ack->transaction_id) : db::pg_param::null());
    params.push_back(ack && ack->offset ? db::pg_param::text(ack_offset) : db::pg_param::null());
    const auto& lease = ack ? ack->lease_id : call.lease_id;
    params.push_back(lease ? db::pg_param::text(*lease) : db::pg_param::null());
    params.push_back(ack ? db::pg_param::text(ack->dead_letter ? "dlq" : "completed") : db::pg_param::null());
    params.push_back(ack && ack->error ? db::pg_param::text(*ack->error) : db::pg_param::null());
    params.push_back(db::pg_param::text(call.release_lease ? "t" : "f"));
    params.push_back(scope ? db::pg_param::text(*scope) : db::pg_param::null());
    auto res = co_await pool.exec(
        "SELECT queen.stream_cycle($1::uuid, $2::bigint, $3, $4::text[], $5::text[], $6::jsonb[], $7::text[], "
        "$8::text[], $9::int[], $10::text[], $11::uuid[], $12::text[], $13::text[], $14::int[], $15, $16::bigint, "
        "$17::uuid, $18, $19, $20::boolean, $21)::text",
        params);
    co_return read_cycle(json::parse(res.text(0, 0)), batch, call.push_items.size());
}

}  // namespace queen::store
