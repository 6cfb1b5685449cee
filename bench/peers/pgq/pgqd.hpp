#pragma once
// pgqd, the PgQ ticker daemon, as a child process: a config written to a private temporary
// directory, started before the run, waited for until it ticks, stopped and cleaned up after.
#include "pg.hpp"

#include <chrono>
#include <stdexcept>
#include <string>

#include <sys/types.h>

namespace pgq_bench {

struct pgqd_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct pgqd_settings {
    std::string binary = "pgqd";
    std::string base_connstr;  // conninfo without dbname
    std::string database;      // initial_database and database_list
    double ticker_period_s = 0.1;
};

// The [pgqd] ini text for `s`, logging and keeping its pid in `dir`.
std::string pgqd_config(const pgqd_settings& s, const std::string& dir);

class pgqd_process {
public:
    // Writes the config to a fresh directory under $TMPDIR (or /tmp) and starts pgqd on it in
    // the foreground (-q; it logs to the directory). Throws pgqd_error when it cannot start.
    // pgqd gets SIGTERM should this process die first.
    explicit pgqd_process(const pgqd_settings& s);
    ~pgqd_process();
    pgqd_process(const pgqd_process&) = delete;
    pgqd_process& operator=(const pgqd_process&) = delete;

    // Returns once pgqd has called pgq.ticker() in `db`'s database; throws pgqd_error (with the
    // log's tail) when pgqd exits first or `timeout` passes.
    void wait_until_ticking(connection& db, std::chrono::milliseconds timeout);

    // True while the child has not exited (reaps it when it has).
    bool running();

    // Stops pgqd (SIGINT, then SIGKILL after 5 s), reaps it and removes the directory. Idempotent.
    void stop();

    // "exit status N" / "killed by signal N" once it has exited, else "running".
    std::string exit_description() const;

    // The last `lines` lines of pgqd's log and console output, for error messages.
    std::string log_tail(std::size_t lines) const;

    const std::string& config_text() const { return config_; }

private:
    pid_t pid_ = -1;
    int status_ = 0;
    bool exited_ = false;
    std::string dir_, config_;
};

}  // namespace pgq_bench
