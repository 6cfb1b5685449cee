#include "store/queues_store.hpp"

#include "db/pg_array.hpp"

namespace queen::store {

namespace asio = boost::asio;
using db::pg_param;

asio::awaitable<configured_queue> configure_queue(db::pg_pool& pool, const queue_config& config) {
    std::vector<pg_param> params{
        pg_param::text(config.queue), config.namespace_name ? pg_param::text(*config.namespace_name) : pg_param::null(),
        config.task ? pg_param::text(*config.task) : pg_param::null(), pg_param::text(config.options_json)};
    auto res = co_await pool.exec("SELECT queue_id, partition_id, options FROM queen.configure($1, $2, $3, $4::jsonb)",
                                  params);
    co_return configured_queue{std::string(res.text(0, 0)), std::string(res.text(0, 1)), std::string(res.text(0, 2))};
}

asio::awaitable<bool> delete_queue(db::pg_pool& pool, const std::string& queue) {
    std::vector<pg_param> params{pg_param::text(queue)};
    auto res = co_await pool.exec("SELECT queen.delete_queue($1)", params);
    co_return res.boolean(0, 0);
}

asio::awaitable<std::map<std::string, bool>> queue_encryption(db::pg_pool& pool, const std::set<std::string>& queues) {
    db::pg_array_builder names;
    for (const auto& q : queues) names.add(q);
    const std::string array = names.finish();
    std::vector<pg_param> params{pg_param::text(array)};
    auto res = co_await pool.exec("SELECT queue, encryption_enabled FROM queen.queue_encryption($1::text[])", params);
    std::map<std::string, bool> out;
    for (int row = 0; row < res.rows(); ++row) out[std::string(res.text(row, 0))] = res.boolean(row, 1);
    co_return out;
}

asio::awaitable<database_health> probe_database(db::pg_pool& pool) {
    auto res = co_await pool.exec("SELECT server_version, extension_version FROM queen.database_health()");
    database_health out{std::string(res.text(0, 0)), std::nullopt};
    if (!res.is_null(0, 1)) out.extension_version = std::string(res.text(0, 1));
    co_return out;
}

}  // namespace queen::store
