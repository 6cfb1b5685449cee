#include "store/transaction_store.hpp"

#include "db/pg_array.hpp"
#include "store/ack_arrays.hpp"
#include "store/push_batch.hpp"

#include <nlohmann/json.hpp>

namespace queen::store {

namespace {

using nlohmann::json;

std::optional<std::string> optional_text(const json& row, const char* key) {
    auto it = row.find(key);
    if (it == row.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
}

// queen.transaction's answer (sql/procedures/62_transaction.sql) as a struct; push rows are
// placed at their (request, item) of the batch.
transaction_outcome read_outcome(const json& j, const push_batch& batch,
                                 const std::vector<const std::vector<domain::push_item>*>& pushes) {
    transaction_outcome out;
    out.success = j.value("success", false);
    for (const auto* items : pushes) out.push.emplace_back(items->size());
    for (const auto& row : j.value("push", json::array())) {
        const auto [r, i] = position_of(batch, row.at("item").get<std::size_t>());
        out.push[r][i] = domain::push_outcome{row.at("status").get<std::string>() == "queued",
                                              row.at("partition_id").get<std::int64_t>(),
                                              row.at("offset").get<std::int64_t>(), std::nullopt};
    }
    for (const auto& row : j.value("ack", json::array())) {
        ack_outcome a;
        a.item = row.at("item").get<std::size_t>();
        a.success = row.value("success", false);
        if (row.contains("offset") && row["offset"].is_number_integer()) a.offset = row["offset"].get<std::int64_t>();
        a.noop = row.value("noop", false);
        a.dlq = row.value("dlq", false);
        a.lease_released = row.value("lease_released", false);
        a.error = optional_text(row, "error");
        a.queue_name = optional_text(row, "queue_name");
        out.ack.push_back(std::move(a));
    }
    if (auto f = j.find("failure"); f != j.end() && f->is_object())
        out.failure = transaction_failure{
            optional_text(*f, "kind").value_or(""),
            f->contains("item") && (*f)["item"].is_number_unsigned() ? (*f)["item"].get<std::size_t>() : 0,
            optional_text(*f, "error").value_or("")};
    return out;
}

}  // namespace

boost::asio::awaitable<transaction_outcome> run_transaction(
    db::pg_pool& pool, const std::vector<const std::vector<domain::push_item>*>& pushes,
    const std::vector<transaction_ack>& acks, const std::vector<std::string>& required_leases,
    const std::optional<std::string>& scope) {
    db::pg_array_builder groups, required;
    detail::ack_arrays a;
    for (const auto& [group, ack] : acks) {
        groups.add(group);
        a.add(ack);
    }
    for (const auto& l : required_leases) required.add(l);
    const std::string ack_arrays[] = {groups.finish(),    a.partition_ids.finish(), a.transaction_ids.finish(),
                                      a.offsets.finish(), a.lease_ids.finish(),     a.statuses.finish(),
                                      a.errors.finish(),  required.finish()};
    const push_batch batch = make_push_batch(pushes);
    std::vector<db::pg_param> params;
    for (const auto& a : batch.arrays) params.push_back(db::pg_param::text(a));
    for (const auto& a : ack_arrays) params.push_back(db::pg_param::text(a));
    params.push_back(scope ? db::pg_param::text(*scope) : db::pg_param::null());
    auto res = co_await pool.exec(
        "SELECT queen.transaction($1::text[], $2::text[], $3::int[], $4::text[], $5::uuid[], $6::text[], "
        "$7::text[], $8::text[], $9::bigint[], $10::text[], $11::bigint[], $12::uuid[], $13::text[], "
        "$14::text[], $15::uuid[], $16::text)",
        params);
    co_return read_outcome(json::parse(res.text(0, 0)), batch, pushes);
}

}  // namespace queen::store
