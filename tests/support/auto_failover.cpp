#include "auto_failover.hpp"

#include "server_user.hpp"

#include <fmt/core.h>
#include <libpq-fe.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace queen::test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

const char* pg_autoctl_binary = "/usr/bin/pg_autoctl";

// One statement on a connection string; its first value ("" for none). Throws on failure.
std::string sql_on(const std::string& conninfo, const std::string& sql) {
    std::unique_ptr<PGconn, decltype(&PQfinish)> c(PQconnectdb(conninfo.c_str()), &PQfinish);
    if (PQstatus(c.get()) != CONNECTION_OK) throw std::runtime_error(PQerrorMessage(c.get()));
    std::unique_ptr<PGresult, decltype(&PQclear)> r(PQexec(c.get(), sql.c_str()), &PQclear);
    const auto st = PQresultStatus(r.get());
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) throw std::runtime_error(PQerrorMessage(c.get()));
    if (st != PGRES_TUPLES_OK || PQntuples(r.get()) == 0 || PQgetisnull(r.get(), 0, 0)) return "";
    return PQgetvalue(r.get(), 0, 0);
}

// The first column of every row of one query on a connection string. Throws on failure.
std::vector<std::string> rows_on(const std::string& conninfo, const std::string& sql) {
    std::unique_ptr<PGconn, decltype(&PQfinish)> c(PQconnectdb(conninfo.c_str()), &PQfinish);
    if (PQstatus(c.get()) != CONNECTION_OK) throw std::runtime_error(PQerrorMessage(c.get()));
    std::unique_ptr<PGresult, decltype(&PQclear)> r(PQexec(c.get(), sql.c_str()), &PQclear);
    if (PQresultStatus(r.get()) != PGRES_TUPLES_OK) throw std::runtime_error(PQerrorMessage(c.get()));
    std::vector<std::string> out;
    for (int i = 0; i < PQntuples(r.get()); ++i) out.emplace_back(PQgetvalue(r.get(), i, 0));
    return out;
}

std::string tcp(int port, const std::string& database) {
    return fmt::format("host=127.0.0.1 port={} dbname={} user=postgres connect_timeout=2", port, database);
}

// Polls `done` every 200 ms until it holds or `timeout` passes; a throw counts as not yet.
template <class F>
bool poll_until(F done, std::chrono::seconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        try {
            if (done()) return true;
        } catch (const std::exception&) {
        }
        std::this_thread::sleep_for(200ms);
    }
    return false;
}

}  // namespace

auto_failover_formation::auto_failover_formation(std::string database) : database_(std::move(database)) {
    if (access(pg_autoctl_binary, X_OK) != 0)
        throw std::runtime_error("pg_autoctl not found (bash scripts/install-deps.sh installs pg-auto-failover-cli)");
    char tmpl[] = "/tmp/queen-failover-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
    root_ = tmpl;
    try {
        give_to_server_user(root_);
        // pg_autoctl keeps its configuration and state under the XDG directories: this formation's own.
        for (const char* d : {"config", "share", "run"}) {
            fs::create_directory(root_ / d);
            give_to_server_user(root_ / d);
        }
        env_ = {"XDG_CONFIG_HOME=" + (root_ / "config").string(), "XDG_DATA_HOME=" + (root_ / "share").string(),
                "XDG_RUNTIME_DIR=" + (root_ / "run").string(), "HOME=" + root_.string()};
        const std::string pg_ctl = pg_bin_dir() + "/pg_ctl";

        monitor_.port = free_tcp_port();
        monitor_.pgdata = root_ / "monitor";
        auto [rc, out] = run_as_server({pg_autoctl_binary, "create", "monitor", "--pgdata", monitor_.pgdata.string(),
                                        "--pgport", std::to_string(monitor_.port), "--pgctl", pg_ctl, "--hostname",
                                        "127.0.0.1", "--auth", "trust", "--no-ssl"},
                                       env_);
        if (rc != 0) throw std::runtime_error("pg_autoctl create monitor failed:\n" + out);
        // The monitor has no --listen: its server listens on loopback only by this override.
        std::ofstream(monitor_.pgdata / "postgresql.auto.conf", std::ios::app) << "listen_addresses = '127.0.0.1'\n";
        monitor_.keeper = start_keeper({pg_autoctl_binary, "run", "--pgdata", monitor_.pgdata.string()}, "monitor");
        if (!poll_until([&] { return monitor_sql("SELECT count(*) FROM pgautofailover.formation") == "1"; }, 120s))
            throw std::runtime_error("the monitor did not start");
        // Health checks every second; a node unreachable for 3 s is failed over, and a primary
        // that cannot be told to demote is taken as demoted after 5 s (defaults: 20 s and 30 s).
        for (const char* s : {"health_check_period = 1000", "health_check_timeout = 1000",
                              "health_check_retry_delay = 500", "health_check_max_retries = 1",
                              "node_considered_unhealthy_timeout = 3000", "primary_demote_timeout = 5000"})
            monitor_sql(std::string("ALTER SYSTEM SET pgautofailover.") + s);
        monitor_sql("SELECT pg_reload_conf()");

        const std::string monitor_uri =
            fmt::format("postgres://autoctl_node@127.0.0.1:{}/pg_auto_failover?sslmode=disable", monitor_.port);
        for (int i = 1; i <= 2; ++i) {
            node n;
            n.port = free_tcp_port();
            n.pgdata = root_ / ("node" + std::to_string(i));
            n.keeper = start_keeper({pg_autoctl_binary, "create", "postgres", "--pgdata", n.pgdata.string(), "--pgport",
                                     std::to_string(n.port), "--pgctl", pg_ctl, "--hostname", "127.0.0.1", "--listen",
                                     "127.0.0.1", "--dbname", database_, "--monitor", monitor_uri, "--auth", "trust",
                                     "--no-ssl", "--run"},
                                    "node" + std::to_string(i));
            nodes_.push_back(n);
            if (i == 1 && !poll_until([&] { return primary_port() == n.port && wait_writable(n.port, 1s); }, 120s))
                throw std::runtime_error("the first node did not become the primary");
        }
        // The secondary's base backup waits for a checkpoint: ask for one until it is in.
        const bool paired = poll_until(
            [&] {
                sql_on(tcp(nodes_[0].port, database_), "CHECKPOINT");
                return monitor_sql(fmt::format("SELECT string_agg(reportedstate::text, ',' ORDER BY nodeport = {}) "
                                               "FROM pgautofailover.node",
                                               nodes_[0].port)) == "secondary,primary";
            },
            180s);
        if (!paired) throw std::runtime_error("the nodes did not reach primary and secondary");
    } catch (const std::exception& e) {
        const std::string what = std::string("auto_failover_formation: ") + e.what() + "\n" + state() + logs();
        stop_all();
        throw std::runtime_error(what);
    }
}

auto_failover_formation::~auto_failover_formation() { stop_all(); }

pid_t auto_failover_formation::start_keeper(const std::vector<std::string>& args, const std::string& name) {
    return spawn_as_server(args, env_, root_ / (name + ".log"));
}

std::string auto_failover_formation::monitor_sql(const std::string& sql) const {
    return sql_on(tcp(monitor_.port, "pg_auto_failover"), sql);
}

std::string auto_failover_formation::url() const {
    std::string hosts;
    for (const auto& n : nodes_) hosts += (hosts.empty() ? "" : ",") + fmt::format("127.0.0.1:{}", n.port);
    return "postgresql://postgres@" + hosts + "/" + database_ + "?target_session_attrs=read-write";
}

std::string auto_failover_formation::conninfo() const {
    std::string hosts, ports;
    for (const auto& n : nodes_) {
        hosts += (hosts.empty() ? "" : ",") + std::string("127.0.0.1");
        ports += (ports.empty() ? "" : ",") + std::to_string(n.port);
    }
    return "host=" + hosts + " port=" + ports + " dbname=" + database_ + " user=postgres target_session_attrs=read-write";
}

int auto_failover_formation::primary_port() const {
    const std::string port =
        monitor_sql("SELECT nodeport FROM pgautofailover.node WHERE reportedstate IN ('single', 'wait_primary', 'primary') "
                    "AND goalstate IN ('single', 'wait_primary', 'primary') ORDER BY nodeid LIMIT 1");
    return port.empty() ? 0 : std::stoi(port);
}

int auto_failover_formation::kill_primary() {
    const int port = primary_port();
    for (auto& n : nodes_) {
        if (n.port != port || n.keeper <= 0) continue;
        // The postmaster and its children first (each child is a session of its own, left to
        // init once the postmaster is gone), then the keeper's process group.
        kill_postmaster_of(n.pgdata);
        ::kill(-n.keeper, SIGKILL);
        while (waitpid(n.keeper, nullptr, 0) < 0 && errno == EINTR) {
        }
        n.keeper = -1;
        return port;
    }
    throw std::runtime_error("auto_failover_formation: no primary to kill\n" + state());
}

std::pair<int, std::chrono::milliseconds> auto_failover_formation::fail_over() {
    const auto killed_at = std::chrono::steady_clock::now();
    const int old_primary = kill_primary();
    int promoted = 0;
    const bool done = poll_until(
        [&] {
            promoted = primary_port();
            return promoted != 0 && promoted != old_primary && wait_writable(promoted, 1s);
        },
        60s);
    if (!done) throw std::runtime_error("auto_failover_formation: no node took over\n" + state());
    return {promoted,
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - killed_at)};
}

bool auto_failover_formation::wait_writable(int port, std::chrono::seconds timeout) const {
    return poll_until([&] { return sql_on(tcp(port, database_), "SELECT pg_is_in_recovery()") == "f"; }, timeout);
}

std::string auto_failover_formation::run_sql(int port, const std::string& sql) const {
    return sql_on(tcp(port, database_), sql);
}

std::vector<std::string> auto_failover_formation::rows(int port, const std::string& sql) const {
    return rows_on(tcp(port, database_), sql);
}

std::string auto_failover_formation::state() const {
    try {
        return "monitor: " + monitor_sql("SELECT string_agg(format('%s:%s reported %s, assigned %s', nodehost, nodeport, "
                                         "reportedstate, goalstate), '; ' ORDER BY nodeid) FROM pgautofailover.node") +
               "\n";
    } catch (const std::exception& e) {
        return std::string("monitor: unreachable (") + e.what() + ")\n";
    }
}

std::string auto_failover_formation::events() const {
    return monitor_sql("SELECT string_agg(to_char(eventtime, 'HH24:MI:SS.MS') || ' ' || description, E'\\n' "
                       "ORDER BY eventid) FROM pgautofailover.event");
}

std::string auto_failover_formation::logs() const {
    std::ostringstream out;
    for (const char* name : {"monitor", "node1", "node2"}) {
        std::ifstream f(root_ / (std::string(name) + ".log"));
        if (!f) continue;
        std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        if (text.size() > 4000) text = "…" + text.substr(text.size() - 4000);
        out << "--- " << name << ".log\n" << text << "\n";
    }
    return out.str();
}

void auto_failover_formation::stop_all() noexcept {
    std::vector<node*> all{&monitor_};
    for (auto& n : nodes_) all.push_back(&n);
    for (node* n : all) {
        kill_postmaster_of(n->pgdata);  // before the keeper's group, as in kill_primary
        if (n->keeper > 0) {
            ::kill(-n->keeper, SIGKILL);
            while (waitpid(n->keeper, nullptr, 0) < 0 && errno == EINTR) {
            }
            n->keeper = -1;
        }
    }
    std::error_code ec;
    if (!root_.empty()) fs::remove_all(root_, ec);
}

}  // namespace queen::test
