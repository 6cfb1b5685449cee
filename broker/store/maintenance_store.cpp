#include "store/maintenance_store.hpp"

#include <nlohmann/json.hpp>

namespace queen::store {

namespace asio = boost::asio;
using db::pg_param;

asio::awaitable<maintenance_flags_row> read_maintenance(db::pg_pool& pool) {
    auto res = co_await pool.exec("SELECT push_maintenance, pop_maintenance FROM queen.get_maintenance()");
    co_return maintenance_flags_row{res.boolean(0, 0), res.boolean(0, 1)};
}

asio::awaitable<maintenance_flags_row> set_maintenance(db::pg_pool& pool, std::optional<bool> push,
                                                       std::optional<bool> pop) {
    std::vector<pg_param> params{push ? pg_param::text(*push ? "true" : "false") : pg_param::null(),
                                 pop ? pg_param::text(*pop ? "true" : "false") : pg_param::null()};
    auto res = co_await pool.exec(
        "SELECT push_maintenance, pop_maintenance FROM queen.set_maintenance($1::boolean, $2::boolean)", params);
    co_return maintenance_flags_row{res.boolean(0, 0), res.boolean(0, 1)};
}

asio::awaitable<bool> try_lead_housekeeping(db::pooled_connection& conn) {
    // Key "QUEENHK": one leader per database.
    auto got = co_await conn.exec("SELECT pg_try_advisory_lock(5138047736113649227)");
    co_return got.boolean(0, 0);
}

asio::awaitable<housekeeping_counts> run_housekeeping(db::pooled_connection& conn, std::chrono::seconds group_idle,
                                                      std::chrono::seconds partition_idle) {
    const std::string groups = std::to_string(group_idle.count()), partitions = std::to_string(partition_idle.count());
    std::vector<pg_param> params{pg_param::text(groups), pg_param::text(partitions)};
    auto res = co_await conn.exec("SELECT queen.run_housekeeping($1::int, $2::int)", params);
    housekeeping_counts out;
    out.summary = std::string(res.text(0, 0));
    const auto doc = nlohmann::json::parse(out.summary);
    if (auto it = doc.find("removed"); it != doc.end() && it->is_array()) {
        for (const auto& r : *it)
            out.removed.push_back(removed_messages{r.at("queue").get<std::string>(), r.value("group", std::string()),
                                                   r.at("kind").get<std::string>(),
                                                   r.at("messages").get<std::int64_t>()});
    }
    co_return out;
}

asio::awaitable<claim_floor_counts> raise_claim_floors(db::pooled_connection& conn) {
    auto res = co_await conn.exec("CALL queen.raise_claim_floors()");
    co_return claim_floor_counts{res.int64(0, 0), res.int64(0, 1)};
}

}  // namespace queen::store
