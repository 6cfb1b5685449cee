#pragma once
// One blocking libpq connection, for what runs before the io_context does: schema
// application, the reads at boot, the embedded server's database creation. Failures are
// db::pg_error values with their SQLSTATE, as on the asynchronous path (db/pg_pool.hpp).
#include "db/pg_error.hpp"
#include "db/pg_result.hpp"

#include <libpq-fe.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace queen::db {

// SQLSTATEs that boot code tells apart.
namespace sqlstate {
inline constexpr std::string_view lock_not_available = "55P03";
inline constexpr std::string_view deadlock_detected = "40P01";
inline constexpr std::string_view duplicate_database = "42P04";
}  // namespace sqlstate

class sync_connection {
public:
    // Connects once; throws pg_error(connection_lost) "cannot connect to PostgreSQL: <reason>".
    explicit sync_connection(const std::string& conninfo);
    // Connects, retrying every 500 ms (each failure logged) until `wait` has passed.
    static sync_connection connect_with_retry(const std::string& conninfo, std::chrono::milliseconds wait);

    // Runs `sql` (without parameters it may hold several statements) with text parameters and
    // text results; throws pg_error carrying the SQLSTATE, its text "<what> failed: <libpq's
    // message>".
    pg_result exec(const std::string& sql, const std::string& what, const std::vector<std::string>& params = {});
    // Runs a statement whose own failure changes nothing for the caller (a ROLLBACK or an
    // unlock on the way out of a failure).
    void exec_ignoring_failure(const std::string& sql) noexcept;
    // `name` quoted as an SQL identifier; throws std::invalid_argument when it cannot be.
    std::string quote_identifier(const std::string& name);

private:
    std::unique_ptr<PGconn, decltype(&PQfinish)> conn_;
};

}  // namespace queen::db
