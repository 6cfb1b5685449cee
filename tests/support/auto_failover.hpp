#pragma once
// A pg_auto_failover formation for tests (docs/deployment.md, "Failover with pg_auto_failover"):
// a monitor, a primary and a secondary on loopback ports, each a `pg_autoctl` keeper run as the
// server user in a session of its own, made with the commands an operator runs. The monitor's
// health checks are shortened so that a lost primary is replaced within seconds. The
// destructor kills every keeper and server and removes the directory.
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace queen::test {

class auto_failover_formation {
public:
    // The formation with its database `database`; throws with the keepers' logs when it does
    // not reach one primary and one secondary.
    explicit auto_failover_formation(std::string database = "queen");
    ~auto_failover_formation();
    auto_failover_formation(const auto_failover_formation&) = delete;
    auto_failover_formation& operator=(const auto_failover_formation&) = delete;

    // Every node in one libpq URL: postgresql://postgres@127.0.0.1:p1,127.0.0.1:p2/<database>
    // ?target_session_attrs=read-write (what the broker and the proxy are given).
    std::string url() const;
    // The same as key=value text (what a PL/Proxy cluster is given).
    std::string conninfo() const;
    // The port of the node the monitor has as primary (0 when none).
    int primary_port() const;
    // SIGKILL to the primary's keeper and its PostgreSQL, as a lost machine; returns its port.
    int kill_primary();
    // kill_primary, then waits (up to a minute) until the monitor has another node as primary
    // and it accepts writes: its port and how long that took. Throws with the monitor's view
    // when it does not happen.
    std::pair<int, std::chrono::milliseconds> fail_over();
    // Waits until the node on `port` accepts writes; false when `timeout` passes first.
    bool wait_writable(int port, std::chrono::seconds timeout) const;
    // One statement on the node on `port` in the formation's database; its first value.
    std::string run_sql(int port, const std::string& sql) const;
    // The first column of every row it answers there.
    std::vector<std::string> rows(int port, const std::string& sql) const;
    // The monitor's view of the nodes, for failure messages.
    std::string state() const;
    // The monitor's events (time and description), one per line, oldest first.
    std::string events() const;

private:
    struct node {
        int port = 0;
        std::filesystem::path pgdata;
        pid_t keeper = -1;  // its session: kill(-keeper) reaches its PostgreSQL too
    };
    pid_t start_keeper(const std::vector<std::string>& args, const std::string& name);
    std::string monitor_sql(const std::string& sql) const;
    std::string logs() const;
    void stop_all() noexcept;

    std::string database_;
    std::filesystem::path root_;
    std::vector<std::string> env_;
    node monitor_;
    std::vector<node> nodes_;
};

}  // namespace queen::test
