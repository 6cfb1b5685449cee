#include "schema/migrator.hpp"

#include "log/log.hpp"
#include "schema/sql_bundle.hpp"

#include <libpq-fe.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

namespace queen::schema {
namespace {

// Advisory lock key shared by every broker applying the schema ("QUEENSCH").
constexpr const char* lock_key = "5138047736113652040";

using conn_ptr = std::unique_ptr<PGconn, decltype(&PQfinish)>;
using result_ptr = std::unique_ptr<PGresult, decltype(&PQclear)>;

conn_ptr connect_with_retry(const std::string& conninfo, std::chrono::milliseconds wait) {
    auto deadline = std::chrono::steady_clock::now() + wait;
    for (;;) {
        conn_ptr conn(PQconnectdb(conninfo.c_str()), &PQfinish);
        if (conn && PQstatus(conn.get()) == CONNECTION_OK) return conn;
        std::string why = conn ? PQerrorMessage(conn.get()) : "out of memory";
        if (std::chrono::steady_clock::now() > deadline)
            throw std::runtime_error("cannot connect to PostgreSQL: " + why);
        log::warn("waiting for PostgreSQL: {}", why);
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
}

// A statement's failure, with its SQLSTATE ("" when libpq has none).
class sql_error : public std::runtime_error {
public:
    sql_error(const std::string& what, std::string sqlstate) : std::runtime_error(what), sqlstate_(std::move(sqlstate)) {}
    const std::string& sqlstate() const noexcept { return sqlstate_; }

private:
    std::string sqlstate_;
};

void check_result(PGconn* conn, const PGresult* res, const std::string& what) {
    auto status = PQresultStatus(res);
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return;
    const char* state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
    throw sql_error(what + " failed: " + PQerrorMessage(conn), state ? state : "");
}

result_ptr exec(PGconn* conn, const std::string& sql, const std::string& what) {
    result_ptr res(PQexec(conn, sql.c_str()), &PQclear);
    check_result(conn, res.get(), what);
    return res;
}

result_ptr exec_params(PGconn* conn, const char* sql, const std::string& value, const std::string& what) {
    const char* values[] = {value.c_str()};
    result_ptr res(PQexecParams(conn, sql, 1, nullptr, values, nullptr, nullptr, 0), &PQclear);
    check_result(conn, res.get(), what);
    return res;
}


int database_version(PGconn* conn) {
    auto res = exec(conn,
                    "SELECT CASE WHEN to_regclass('queen.schema_version') IS NULL THEN -1 "
                    "ELSE (SELECT coalesce(max(version), 0) FROM queen.schema_version) END",
                    "reading the schema version");
    return std::stoi(PQgetvalue(res.get(), 0, 0));
}

// queen.max_payload_depth(), the one source of the payload nesting limit (docs/json-input.md).
int payload_depth_limit(PGconn* conn) {
    auto res = exec(conn,
                    "SELECT CASE WHEN to_regprocedure('queen.max_payload_depth()') IS NULL THEN -1 "
                    "ELSE queen.max_payload_depth() END",
                    "reading the payload depth limit");
    const int limit = std::stoi(PQgetvalue(res.get(), 0, 0));
    if (limit < 0)
        throw std::runtime_error("the database's queen procedures predate this broker (queen.max_payload_depth() "
                                 "is missing); start it once with QUEEN_APPLY_SCHEMA=1");
    return limit;
}

// How long a broker keeps retrying the procedures while traffic holds the locks they need.
constexpr std::chrono::seconds procedures_patience{60};

// The fingerprint of the procedures the database last applied ("" when none is recorded).
std::string stored_fingerprint(PGconn* conn) {
    auto res = exec(conn, "SELECT fingerprint FROM queen.procedure_bundle", "reading the procedure fingerprint");
    return PQntuples(res.get()) > 0 ? std::string(PQgetvalue(res.get(), 0, 0)) : std::string();
}

// Applies every procedure file and records the bundle's fingerprint in one transaction,
// unless the database already holds this fingerprint; returns whether it applied them.
// Gives way to traffic: each lock wait is cut at half of deadlock_timeout (at most 200 ms),
// before PostgreSQL's deadlock check could cancel a client's transaction instead; the whole
// transaction is then rolled back and tried again, for up to procedures_patience.
bool apply_procedures(PGconn* c) {
    const std::string fingerprint(embedded_procedures_fingerprint());
    if (stored_fingerprint(c) == fingerprint) return false;
    const auto deadline = std::chrono::steady_clock::now() + procedures_patience;
    std::chrono::milliseconds pause{50};
    for (;;) {
        try {
            exec(c, "BEGIN", "BEGIN");
            exec(c,
                 "SELECT set_config('lock_timeout', greatest(1, least(200, setting::int / 2))::text || 'ms', true) "
                 "FROM pg_catalog.pg_settings WHERE name = 'deadlock_timeout'",
                 "setting lock_timeout");
            for (const auto& p : embedded_procedures()) exec(c, std::string(p.text), "procedures " + std::string(p.name));
            exec_params(c,
                        "INSERT INTO queen.procedure_bundle (fingerprint) VALUES ($1) ON CONFLICT (singleton) "
                        "DO UPDATE SET fingerprint = EXCLUDED.fingerprint, applied_at = now()",
                        fingerprint, "recording the procedure fingerprint");
            exec(c, "COMMIT", "COMMIT");
            return true;
        } catch (const sql_error& e) {
            PQclear(PQexec(c, "ROLLBACK"));
            // 55P03 lock_not_available (lock_timeout), 40P01 deadlock_detected.
            const bool lock_wait = e.sqlstate() == "55P03" || e.sqlstate() == "40P01";
            if (!lock_wait || std::chrono::steady_clock::now() + pause > deadline) throw;
            log::warn("schema: the procedures wait for locks that traffic holds; trying again in {} ms", pause.count());
        } catch (...) {
            PQclear(PQexec(c, "ROLLBACK"));
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
    auto conn = connect_with_retry(conninfo, connect_wait);
    PGconn* c = conn.get();
    exec(c, "SET client_min_messages = warning", "setting client_min_messages");
    exec(c, std::string("SELECT pg_advisory_lock(") + lock_key + ")", "taking the schema lock");
    migration_report report;
    try {
        exec(c,
             "CREATE SCHEMA IF NOT EXISTS queen; "
             "CREATE TABLE IF NOT EXISTS queen.schema_version ("
             "  version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
             "creating queen.schema_version");
        int current = database_version(c);
        refuse_if_newer(current);
        for (const auto& m : embedded_migrations()) {
            int v = migration_number(m.name);
            if (v <= current) continue;
            exec(c, "BEGIN", "BEGIN");
            try {
                exec(c, std::string(m.text), "migration " + std::string(m.name));
                std::string escaped_name;
                for (char ch : m.name) {
                    if (ch == '\'') escaped_name += '\'';
                    escaped_name += ch;
                }
                exec(c,
                     "INSERT INTO queen.schema_version (version, name) VALUES (" + std::to_string(v) + ", '" +
                         escaped_name + "')",
                     "recording migration " + std::string(m.name));
                exec(c, "COMMIT", "COMMIT");
            } catch (...) {
                PQclear(PQexec(c, "ROLLBACK"));
                throw;
            }
            log::info("schema: applied migration {}", m.name);
            ++report.applied;
        }
        report.procedures_applied = apply_procedures(c);
        report.database_version = database_version(c);
        report.max_payload_depth = payload_depth_limit(c);
    } catch (...) {
        PQclear(PQexec(c, (std::string("SELECT pg_advisory_unlock(") + lock_key + ")").c_str()));
        throw;
    }
    exec(c, std::string("SELECT pg_advisory_unlock(") + lock_key + ")", "releasing the schema lock");
    return report;
}

void create_database_if_missing(const std::string& conninfo_postgres, const std::string& database) {
    std::unique_ptr<PGconn, decltype(&PQfinish)> conn(PQconnectdb(conninfo_postgres.c_str()), &PQfinish);
    if (!conn || PQstatus(conn.get()) != CONNECTION_OK)
        throw std::runtime_error("cannot connect to PostgreSQL (" + conninfo_postgres +
                                 "): " + (conn ? PQerrorMessage(conn.get()) : "out of memory"));
    PGconn* c = conn.get();
    const char* values[] = {database.c_str()};
    result_ptr exists(
        PQexecParams(c, "SELECT 1 FROM pg_database WHERE datname = $1", 1, nullptr, values, nullptr, nullptr, 0),
        &PQclear);
    if (PQresultStatus(exists.get()) != PGRES_TUPLES_OK)
        throw std::runtime_error(std::string("cannot list databases: ") + PQerrorMessage(c));
    if (PQntuples(exists.get()) > 0) return;
    char* ident = PQescapeIdentifier(c, database.c_str(), database.size());
    if (!ident) throw std::runtime_error("invalid database name: " + database);
    const std::string sql = std::string("CREATE DATABASE ") + ident;
    PQfreemem(ident);
    result_ptr created(PQexec(c, sql.c_str()), &PQclear);
    if (PQresultStatus(created.get()) != PGRES_COMMAND_OK) {
        const char* state = PQresultErrorField(created.get(), PG_DIAG_SQLSTATE);
        if (state && std::string_view(state) == "42P04") return;  // created concurrently
        throw std::runtime_error("cannot create database \"" + database + "\": " + PQerrorMessage(c));
    }
}

migration_report check(const std::string& conninfo, std::chrono::milliseconds connect_wait) {
    auto conn = connect_with_retry(conninfo, connect_wait);
    int v = database_version(conn.get());
    if (v < 0)
        throw std::runtime_error("the database has no queen schema and QUEEN_APPLY_SCHEMA=0; "
                                 "start one broker with schema application enabled first");
    refuse_if_newer(v);
    if (v < embedded_schema_version())
        log::warn("schema: database is at version {}, this broker knows {}; QUEEN_APPLY_SCHEMA=0 so nothing is applied",
                  v, embedded_schema_version());
    return {v, 0, payload_depth_limit(conn.get())};
}

}  // namespace queen::schema
