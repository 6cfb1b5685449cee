#include "db/pg_error.hpp"

#include <utility>

namespace queen::db {

pg_error::pg_error(pg_error_kind kind, std::string sqlstate, std::string message)
    : std::runtime_error(std::move(message)), kind_(kind), sqlstate_(std::move(sqlstate)) {}

bool pg_error::retryable() const noexcept {
    switch (kind_) {
        case pg_error_kind::connection_lost:
        case pg_error_kind::serialization:
        case pg_error_kind::deadlock:
            return true;
        default:
            return false;
    }
}

bool database_unavailable(const pg_error& e) noexcept {
    return e.kind() == pg_error_kind::connection_lost || e.sqlstate() == sqlstate_shard_unreachable ||
           e.sqlstate() == sqlstate_shard_moving;
}

pg_error_kind classify_sqlstate(const std::string& sqlstate) {
    if (sqlstate.size() != 5) return pg_error_kind::other;
    if (sqlstate.compare(0, 2, "08") == 0) return pg_error_kind::connection_lost;
    if (sqlstate == "57P01" || sqlstate == "57P02" || sqlstate == "57P03") return pg_error_kind::connection_lost;
    if (sqlstate == "23505") return pg_error_kind::unique_violation;
    if (sqlstate == "40001") return pg_error_kind::serialization;
    if (sqlstate == "40P01") return pg_error_kind::deadlock;
    if (sqlstate == "57014") return pg_error_kind::timed_out;
    if (sqlstate.compare(0, 2, "QN") == 0) return pg_error_kind::raised;
    return pg_error_kind::other;
}

}  // namespace queen::db
