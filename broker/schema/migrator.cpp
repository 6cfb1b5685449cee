#include "schema/migrator.hpp"

#include "db/sync_connection.hpp"
#include "log/log.hpp"
#include "schema/sql_bundle.hpp"

#include <utility>
#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

namespace queen::schema {
namespace {

// Advisory lock key shared by every broker applying the schema ("QUEENSCH").
constexpr const char* lock_key = "5138047736113652040";

int database_version(db::sync_connection& conn) {
    auto res = conn.exec(
        "SELECT CASE WHEN to_regclass('queen.schema_version') IS NULL THEN -1 "
        "ELSE (SELECT coalesce(max(version), 0) FROM queen.schema_version) END",
        "reading the schema version");
    return std::stoi(std::string(res.text(0, 0)));
}

// queen.max_payload_depth(), the one source of the payload nesting limit (docs/json-input.md).
int payload_depth_limit(db::sync_connection& conn) {
    auto res = conn.exec(
        "SELECT CASE WHEN to_regprocedure('queen.max_payload_depth()') IS NULL THEN -1 "
        "ELSE queen.max_payload_depth() END",
        "reading the payload depth limit");
    const int limit = std::stoi(std::string(res.text(0, 0)));
    if (limit < 0)
        throw std::runtime_error(
            "the database's queen procedures predate this broker (queen.max_payload_depth() "
            "is missing); start it once with QUEEN_APPLY_SCHEMA=1");
    return limit;
}

// How long a broker keeps retrying the procedures while traffic holds the locks they need.
constexpr std::chrono::seconds procedures_patience{60};

// The fingerprint of the procedures the database last applied ("" when none is recorded).
std::string stored_fingerprint(db::sync_connection& conn) {
    auto res = conn.exec("SELECT fingerprint FROM queen.procedure_bundle", "reading the procedure fingerprint");
    return res.rows() > 0 ? std::string(res.text(0, 0)) : std::string();
}

// Applies every procedure file and records the bundle's fingerprint in one transaction,
// unless the database already holds this fingerprint; returns whether it applied them.
// Gives way to traffic: each lock wait is cut at half of deadlock_timeout (at most 200 ms),
// before PostgreSQL's deadlock check could cancel a client's transaction instead; the whole
// transaction is then rolled back and tried again, for up to procedures_patience.
bool apply_procedures(db::sync_connection& c) {
    const std::string fingerprint(embedded_procedures_fingerprint());
    if (stored_fingerprint(c) == fingerprint) return false;
    const auto deadline = std::chrono::steady_clock::now() + procedures_patience;
    std::chrono::milliseconds pause{50};
    for (;;) {
        try {
            c.exec("BEGIN", "BEGIN");
            c.exec(
                "SELECT set_config('lock_timeout', greatest(1, least(200, setting::int / 2))::text || 'ms', true) "
                "FROM pg_catalog.pg_settings WHERE name = 'deadlock_timeout'",
                "setting lock_timeout");
            for (const auto& p : embedded_procedures())
                c.exec(std::string(p.text), "procedures " + std::string(p.name));
            c.exec(
                "INSERT INTO queen.procedure_bundle (fingerprint) VALUES ($1) ON CONFLICT (singleton) "
                "DO UPDATE SET fingerprint = EXCLUDED.fingerprint, applied_at = now()",
                "recording the procedure fingerprint", {fingerprint});
            c.exec("COMMIT", "COMMIT");
            return true;
        } catch (const db::pg_error& e) {
            c.exec_ignoring_failure("ROLLBACK");
            // lock_timeout cut a lock wait, or PostgreSQL's deadlock check chose this transaction.
            const bool lock_wait =
                e.sqlstate() == db::sqlstate::lock_not_available || e.sqlstate() == db::sqlstate::deadlock_detected;
            if (!lock_wait || std::chrono::steady_clock::now() + pause > deadline) throw;
            log::warn("schema: the procedures wait for locks that traffic holds; trying again in {} ms", pause.count());
        } catch (...) {
            c.exec_ignoring_failure("ROLLBACK");
            throw;
        }
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::milliseconds(1000));
    }
}

void refuse_if_newer(int db_version) {
    int known = embedded_schema_version();
    if (db_version > known)
        throw std::runtime_error("the database schema is at version " + std::to_string(db_version) +
                                 ", newer than this broker knows (" + std::to_string(known) +
                                 "); upgrade the broker before starting it against this database");
}

}  // namespace

int migration_number(std::string_view file_name) {
    int v = 0;
    for (char c : file_name) {
        if (c < '0' || c > '9') break;
        v = v * 10 + (c - '0');
    }
    return v;
}

int embedded_schema_version() {
    int v = 0;
    for (const auto& m : embedded_migrations()) v = std::max(v, migration_number(m.name));
    return v;
}

migration_report apply(const std::string& conninfo, std::chrono::milliseconds connect_wait) {
    auto c = db::sync_connection::connect_with_retry(conninfo, connect_wait);
    c.exec("SET client_min_messages = warning", "setting client_min_messages");
    c.exec(std::string("SELECT pg_advisory_lock(") + lock_key + ")", "taking the schema lock");
    migration_report report;
    try {
        c.exec(
            "CREATE SCHEMA IF NOT EXISTS queen; "
            "CREATE TABLE IF NOT EXISTS queen.schema_version ("
            "  version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
            "creating queen.schema_version");
        int current = database_version(c);
        refuse_if_newer(current);
        for (const auto& m : embedded_migrations()) {
            int v = migration_number(m.name);
            if (v <= current) continue;
            c.exec("BEGIN", "BEGIN");
            try {
                c.exec(std::string(m.text), "migration " + std::string(m.name));
                c.exec("INSERT INTO queen.schema_version (version, name) VALUES ($1, $2)",
                       "recording migration " + std::string(m.name), {std::to_string(v), std::string(m.name)});
                c.exec("COMMIT", "COMMIT");
            } catch (...) {
                c.exec_ignoring_failure("ROLLBACK");
                throw;
            }
            log::info("schema: applied migration {}", m.name);
            ++report.applied;
        }
        report.procedures_applied = apply_procedures(c);
        report.database_version = database_version(c);
        report.max_payload_depth = payload_depth_limit(c);
    } catch (...) {
        c.exec_ignoring_failure(std::string("SELECT pg_advisory_unlock(") + lock_key + ")");
        throw;
    }
    c.exec(std::string("SELECT pg_advisory_unlock(") + lock_key + ")", "releasing the schema lock");
    return report;
}

void create_database_if_missing(const std::string& conninfo_postgres, const std::string& database) {
    db::sync_connection c(conninfo_postgres);
    auto exists = c.exec("SELECT 1 FROM pg_database WHERE datname = $1", "listing databases", {database});
    if (exists.rows() > 0) return;
    try {
        c.exec("CREATE DATABASE " + c.quote_identifier(database), "creating database \"" + database + "\"");
    } catch (const db::pg_error& e) {
        if (e.sqlstate() != db::sqlstate::duplicate_database) throw;  // else: created concurrently
    }
}

migration_report check(const std::string& conninfo, std::chrono::milliseconds connect_wait) {
    auto conn = db::sync_connection::connect_with_retry(conninfo, connect_wait);
    int v = database_version(conn);
    if (v < 0)
        throw std::runtime_error(
            "the database has no queen schema and QUEEN_APPLY_SCHEMA=0; "
            "start one broker with schema application enabled first");
    refuse_if_newer(v);
    if (v < embedded_schema_version())
        log::warn("schema: database is at version {}, this broker knows {}; QUEEN_APPLY_SCHEMA=0 so nothing is applied",
                  v, embedded_schema_version());
    return {v, 0, payload_depth_limit(conn)};
}

}  // namespace queen::schema
