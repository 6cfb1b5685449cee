#include "store/leases_store.hpp"

#include "db/pg_binary.hpp"

namespace queen::store {

boost::asio::awaitable<lease_extension> extend_lease(db::pg_pool& pool, const std::string& lease_id,
                                                     std::int64_t seconds, const std::optional<std::string>& scope) {
    const std::string secs = std::to_string(seconds);
    std::vector<db::pg_param> params{db::pg_param::text(lease_id), db::pg_param::text(secs),
                                     scope ? db::pg_param::text(*scope) : db::pg_param::null()};
    auto res = co_await pool.exec("SELECT status, expires_at FROM queen.extend_lease($1::uuid, $2::integer, $3::text)",
                                  params, db::result_format::binary);
    const std::string_view status = res.text(0, 0);
    if (status == "extended") co_return lease_extension{lease_extension_status::extended, db::timestamp_us(res, 0, 1)};
    if (status == "expired") co_return lease_extension{lease_extension_status::expired, 0};
    co_return lease_extension{};
}

}  // namespace queen::store
