#pragma once
// libpq in RAII wrappers: a connection that closes itself, results that clear themselves, and
// statement helpers that turn every failure into a pg_error carrying the server's message.
#include <libpq-fe.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace pgq_bench {

struct pg_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct pq_finish {
    void operator()(PGconn* c) const { PQfinish(c); }
};
struct pq_clear {
    void operator()(PGresult* r) const { PQclear(r); }
};
struct pq_free {
    void operator()(PQconninfoOption* o) const { PQconninfoFree(o); }
};

using conn_ptr = std::unique_ptr<PGconn, pq_finish>;
using result_ptr = std::unique_ptr<PGresult, pq_clear>;
using conninfo_ptr = std::unique_ptr<PQconninfoOption, pq_free>;

class connection {
public:
    // Connects with `conninfo` (a conninfo string or URI); `app_name` is the fallback
    // application_name shown in pg_stat_activity. Throws pg_error when the connection fails.
    connection(const std::string& conninfo, const std::string& app_name);

    PGconn* get() const { return conn_.get(); }

    // Runs one parameterless statement (or several, simple protocol); throws unless it succeeded.
    result_ptr exec(const std::string& sql);

    // Runs `sql` with text parameters ($1, $2, …); throws unless it succeeded.
    result_ptr exec(const std::string& sql, std::initializer_list<const std::string*> params);

    // Prepares the named statement; throws on failure.
    void prepare(const std::string& name, const std::string& sql, int n_params);

    // Executes a prepared statement with text parameters; throws unless it succeeded.
    result_ptr exec_prepared(const std::string& name, std::initializer_list<const std::string*> params);

    // The database the connection is attached to.
    std::string database() const { return PQdb(conn_.get()); }

private:
    result_ptr check(PGresult* r, const std::string& what);
    conn_ptr conn_;
};

// Value of row 0, column 0; nullopt when the result is empty or the value is NULL.
std::optional<std::string> single_value(const PGresult* r);

// The conninfo options of `conninfo` that are set, without dbname, as "key='value' …" (for
// pgqd's base_connstr). Throws pg_error when libpq cannot parse `conninfo`.
std::string conninfo_without_dbname(const std::string& conninfo);

}  // namespace pgq_bench
