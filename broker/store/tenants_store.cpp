#include "store/tenants_store.hpp"

namespace queen::store {

boost::asio::awaitable<std::vector<tenant_usage_row>> tenant_usage(db::pg_pool& pool, bool want_bytes) {
    std::vector<db::pg_param> params{db::pg_param::text(want_bytes ? "true" : "false")};
    auto res = co_await pool.exec("SELECT tenant, queues, stored_bytes FROM queen.tenant_usage($1::boolean)", params);
    std::vector<tenant_usage_row> out;
    out.reserve(static_cast<std::size_t>(res.rows()));
    for (int row = 0; row < res.rows(); ++row)
        out.push_back(tenant_usage_row{std::string(res.text(row, 0)), res.int64(row, 1), res.int64(row, 2)});
    co_return out;
}

}  // namespace queen::store
