#pragma once
// A throwaway PostgreSQL cluster for integration tests: a fresh directory under /tmp, a
// copy of the process's one initdb, a server on 127.0.0.1 (a free TCP port) and its own
// socket directory, and a database. stop()/start() restart it on the same data directory and
// port (outage tests); the destructor stops it and removes everything. As root, the server
// runs as `postgres`.
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace queen::test {

// Whether this run of the suite is the one with the queen_ext extension: make test runs the
// whole suite twice, the second time with QUEEN_TEST_EXTENSION=1.
bool extension_run();

// Whether a cluster's database gets CREATE EXTENSION queen_ext before any test uses it.
enum class codec_setup {
    as_run,     // with the extension exactly in the extension run
    stock,      // never
    extension,  // always (the extension must be installed in PostgreSQL's directories)
};

class test_cluster {
public:
    // `settings`: extra postgresql.conf settings, e.g. {{"log_min_messages", "debug1"}};
    // values are quoted as configuration strings. Function call statistics are on
    // (track_functions = all), so tests can see which codec path ran.
    explicit test_cluster(std::map<std::string, std::string> settings = {}, std::string database = "queen_test",
                          codec_setup codec = codec_setup::as_run);
    // A streaming standby of `primary` (pg_basebackup -R) on its own port, started.
    static std::unique_ptr<test_cluster> standby_of(const test_cluster& primary);
    ~test_cluster();
    test_cluster(const test_cluster&) = delete;
    test_cluster& operator=(const test_cluster&) = delete;

    // TCP connection string: host=127.0.0.1 port=<port> dbname=<database> user=postgres
    const std::string& conninfo() const noexcept { return conninfo_; }
    int port() const noexcept { return port_; }
    const std::string& database() const noexcept { return database_; }
    const std::filesystem::path& directory() const noexcept { return root_; }
    const std::filesystem::path& data_dir() const noexcept { return data_dir_; }
    const std::filesystem::path& socket_dir() const noexcept { return socket_dir_; }
    std::string conninfo_for(const std::string& dbname) const;

    void stop();   // fast shutdown, waits
    // SIGKILL to the postmaster (this cluster's, by the PID in its postmaster.pid), as a
    // crash; waits until no client can connect. start() then runs crash recovery.
    void kill_postmaster();
    void start();  // (re)start on the same data directory and port, waits until ready
    bool running() const noexcept { return running_; }
    void promote();  // a standby becomes a primary (pg_ctl promote), waits

    // Runs one statement synchronously; returns the first column of the first row as text
    // ("" when there is no row or it is NULL). Throws std::runtime_error on failure.
    std::string run_sql(const std::string& sql) const;
    std::string run_sql_in(const std::string& dbname, const std::string& sql) const;  // the same, in `dbname`
    // The first column of every row a query answers in `dbname` (NULL as "").
    std::vector<std::string> column_in(const std::string& dbname, const std::string& sql) const;

private:
    struct standby_tag {};
    test_cluster(standby_tag, const test_cluster& primary);
    // The first start: when another process took the port chosen for this cluster (a port is
    // only free until someone binds it), moves to another free port and tries again.
    void start_first_time();

    std::filesystem::path root_, data_dir_, socket_dir_, log_;
    std::string bin_dir_;
    std::string database_;
    std::string conninfo_;
    int port_ = 0;
    bool running_ = false;
};

}  // namespace queen::test
