#pragma once
// Applies the embedded schema at boot: numbered migrations once each (recorded in
// queen.schema_version), then every procedure file (CREATE OR REPLACE) unless the database
// already holds this bundle (queen.procedure_bundle), all under a session advisory lock so
// that brokers starting together take turns. A database whose schema is newer than this
// broker's is refused with a clear message.
#include <chrono>
#include <string>
#include <string_view>

namespace queen::schema {

struct migration_report {
    int database_version = 0;         // after the run
    int applied = 0;                  // migrations applied by this run
    int max_payload_depth = 0;        // queen.max_payload_depth(), read after the run
    bool procedures_applied = false;  // false: the database already held these procedures
};

// The number a migration file name starts with ("0007_consumer_groups.sql" → 7).
int migration_number(std::string_view file_name);

// Highest migration number embedded in this binary.
int embedded_schema_version();

// Applies migrations and procedures; throws std::runtime_error with a clear message. Waits
// up to `connect_wait` for PostgreSQL to accept a connection (a server still starting).
migration_report apply(const std::string& conninfo, std::chrono::milliseconds connect_wait);

// Creates `database` through an administrative connection (conninfo_postgres, to the
// `postgres` database) unless it exists; a concurrent creation is not an error. Throws
// std::runtime_error with a clear message (the embedded server's first start).
void create_database_if_missing(const std::string& conninfo_postgres, const std::string& database);

// Only checks compatibility (QUEEN_APPLY_SCHEMA=0); throws when the database is newer or missing.
migration_report check(const std::string& conninfo, std::chrono::milliseconds connect_wait);

}  // namespace queen::schema
