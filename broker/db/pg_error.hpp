#pragma once
// Database errors as a value type that carries the SQLSTATE and classifies it.
#include <stdexcept>
#include <string>

namespace queen::db {

enum class pg_error_kind {
    connection_lost,   // socket/connection failure, server shut down (class 08, 57P01..57P03)
    unique_violation,  // 23505
    serialization,     // 40001
    deadlock,          // 40P01
    timed_out,         // 57014: cancelled by statement_timeout (or an administrator)
    raised,            // raised by our procedures with SQLSTATE class 'QN' (domain errors)
    other
};

class pg_error : public std::runtime_error {
public:
    pg_error(pg_error_kind kind, std::string sqlstate, std::string message);
    pg_error_kind kind() const noexcept { return kind_; }
    const std::string& sqlstate() const noexcept { return sqlstate_; }
    // True when the same statement may succeed if simply tried again.
    bool retryable() const noexcept;

private:
    pg_error_kind kind_;
    std::string sqlstate_;
};

// Maps a SQLSTATE to its kind.
pg_error_kind classify_sqlstate(const std::string& sqlstate);

// SQLSTATEs our procedures raise that the broker answers by waiting rather than refusing.
inline constexpr const char* sqlstate_shard_unreachable = "QN503";  // a shard proxy lost a shard database
inline constexpr const char* sqlstate_shard_moving = "QNMOV";       // a logical shard is being moved

// Whether the failure is the database's (or a shard's) absence for a while: a lost
// connection, a shard the proxy cannot reach, a logical shard being moved
// (docs/scaling.md). The same call may succeed once it is over.
bool database_unavailable(const pg_error& e) noexcept;

}  // namespace queen::db
