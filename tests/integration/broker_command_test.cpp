// The `queen` process itself (broker/main.cpp, app/command_line.hpp, app/startup_signals.hpp):
//
// - Arguments: only no argument starts a broker; `--help` and `--version` print and exit 0,
//   anything else is a usage error (exit 2); none of them takes a port or creates a database.
// - LogPipe: a log pipe closed by its reader (`queen 2>&1 | head -2`) does not stop the broker.
// - StartUpSignal: SIGTERM while the schema is applied (held at the schema lock by the test)
//   stops start-up at the end of the step and stops the embedded PostgreSQL it had started.
// - GracefulStop: SIGTERM waits for the requests in flight, not for connections idle between
//   requests.
#include "prometheus_samples.hpp"
#include "raw_connection.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace queen::test {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// The schema lock the migrator takes (broker/schema/migrator.cpp).
constexpr const char* schema_lock_key = "5138047736113652040";

// `queen args…` started with only `env` (and PATH); its stdout and stderr go to the given
// descriptors (-1: /dev/null).
pid_t spawn_queen(const std::vector<std::string>& args, std::vector<std::string> env, int out_fd, int err_fd) {
    env.push_back(std::string("PATH=") + (getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin"));
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int null_fd = ::open("/dev/null", O_WRONLY);
        ::dup2(out_fd >= 0 ? out_fd : null_fd, 1);
        ::dup2(err_fd >= 0 ? err_fd : null_fd, 2);
        std::vector<char*> argv{const_cast<char*>(QUEEN_BROKER_BINARY)};
        for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        std::vector<char*> envp;
        for (auto& e : env) envp.push_back(e.data());
        envp.push_back(nullptr);
        ::execve(QUEEN_BROKER_BINARY, argv.data(), envp.data());
        ::_exit(127);
    }
    return pid;
}

// The exit status of `pid` once it ends within `limit`; nullopt (and the process killed) when
// it is still running then.
std::optional<int> exit_status_within(pid_t pid, std::chrono::seconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (std::chrono::steady_clock::now() < until) {
        if (::waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        std::this_thread::sleep_for(50ms);
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return std::nullopt;
}

// Everything readable from `fd` until its writers close it.
std::string read_all(int fd) {
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
    return out;
}

// True when 127.0.0.1:port can be bound (nobody listens on it).
bool port_free(unsigned short port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return ok;
}

struct finished_command {
    std::optional<int> status;
    std::string out, err;
};

// Runs `queen args…` with a private data directory and port; what it printed and its status.
finished_command run_queen(const std::vector<std::string>& args, const fs::path& data_dir, unsigned short port) {
    int out[2], err[2];
    if (::pipe(out) != 0 || ::pipe(err) != 0) throw std::runtime_error("pipe failed");
    const pid_t pid = spawn_queen(args, {"QUEEN_DATA_DIR=" + data_dir.string(), "PORT=" + std::to_string(port),
                                         "HOST=127.0.0.1", "HOME=" + data_dir.parent_path().string()},
                                  out[1], err[1]);
    ::close(out[1]);
    ::close(err[1]);
    finished_command r;
    std::thread reader([&] { r.err = read_all(err[0]); });
    r.out = read_all(out[0]);
    reader.join();
    ::close(out[0]);
    ::close(err[0]);
    r.status = exit_status_within(pid, 20s);
    return r;
}

// The conninfo in the `psql "…"` line an embedded broker logs.
std::string embedded_conninfo(const std::string& log) {
    const auto at = log.find("psql \"");
    if (at == std::string::npos) return {};
    const auto start = at + 6;
    return log.substr(start, log.find('"', start) - start);
}

// Stops a server the test left behind on `data_dir`, if any.
void stop_leftover_server(const fs::path& data_dir) {
    if (!fs::exists(data_dir / "postmaster.pid")) return;
    const std::string cmd = "runuser -u postgres -- \"$(pg_config --bindir)/pg_ctl\" -D '" + data_dir.string() +
                            "' stop -m immediate >/dev/null 2>&1";
    [[maybe_unused]] const int ignored = std::system(cmd.c_str());
}

}  // namespace

TEST(BrokerCommand, ArgumentsOtherThanNoneStartNothing) {
    temp_dir dir("command-line");
    const fs::path data = dir.path / "data";
    const unsigned short port = broker_process::free_port();

    const auto version = run_queen({"--version"}, data, port);
    EXPECT_EQ(version.status, 0) << version.err;
    EXPECT_EQ(version.out.rfind("queen ", 0), 0u) << version.out;
    EXPECT_NE(version.out.find("schema version "), std::string::npos) << version.out;
    EXPECT_NE(version.out.find("libpq "), std::string::npos) << version.out;

    const auto help = run_queen({"--help"}, data, port);
    EXPECT_EQ(help.status, 0) << help.err;
    EXPECT_EQ(help.out.rfind("usage: queen", 0), 0u) << help.out;
    EXPECT_NE(help.out.find("queen shards init"), std::string::npos) << help.out;

    for (const char* bad_arg : {"--bogus", "serve", "--port"}) {
        const std::string bad = bad_arg;
        const auto refused = run_queen({bad}, data, port);
        EXPECT_EQ(refused.status, 2) << bad << ": " << refused.err;
        EXPECT_EQ(refused.out, "") << bad;
        EXPECT_NE(refused.err.find("queen: unknown argument '" + bad + "'"), std::string::npos) << refused.err;
        EXPECT_NE(refused.err.find("usage: queen"), std::string::npos) << refused.err;
    }
    EXPECT_FALSE(fs::exists(data)) << "a command that is not the broker created its database";
    EXPECT_TRUE(port_free(port)) << "a command that is not the broker took the port";
}

TEST(BrokerCommand, ALogPipeClosedByItsReaderDoesNotStopTheBroker) {
    int log[2];
    ASSERT_EQ(::pipe(log), 0);
    const unsigned short port = broker_process::free_port();
    const pid_t pid = spawn_queen({}, {"QUEEN_DATABASE_URL=" + cluster().conninfo(), "PORT=" + std::to_string(port),
                                       "HOST=127.0.0.1"},
                                  log[1], log[1]);
    ::close(log[1]);
    // `| head -2`: two lines read, then the pipe's only reader goes away.
    std::string first;
    char c;
    for (int lines = 0; lines < 2 && ::read(log[0], &c, 1) == 1;) lines += (first += c, c == '\n');
    EXPECT_NE(first.find("queen broker"), std::string::npos) << first;
    ::close(log[0]);
    // Start-up goes on logging into the closed pipe; the broker must serve all the same.
    const bool healthy = eventually(
        [&] {
            try {
                http_client h("127.0.0.1", port);
                return h.get("/health").status == 200;
            } catch (...) {
                return false;
            }
        },
        30s);
    int status = 0;
    EXPECT_TRUE(healthy) << "the broker died: "
                         << (::waitpid(pid, &status, WNOHANG) == pid && WIFSIGNALED(status)
                                 ? "signal " + std::to_string(WTERMSIG(status))
                                 : std::string("no answer"));
    ::kill(pid, SIGTERM);  // its stop is logged into the closed pipe too
    EXPECT_EQ(exit_status_within(pid, 20s), 0);
}

TEST(BrokerCommand, ASignalWhileTheSchemaIsAppliedStopsTheEmbeddedServer) {
    temp_dir dir("start-signal", true);
    fs::permissions(dir.path, fs::perms::all);
    const fs::path data = dir.path / "data";
    std::string conninfo;
    {
        // A broker killed with -9 leaves its embedded server running: the next one adopts it,
        // so the test can hold the schema lock before that broker applies the schema.
        broker_process first("", {{"QUEEN_DATA_DIR", data.string()}});
        conninfo = embedded_conninfo(first.log());
        first.kill9();
    }
    ASSERT_FALSE(conninfo.empty());
    ASSERT_TRUE(fs::exists(data / "postmaster.pid"));
    PGconn* holder = PQconnectdb(conninfo.c_str());
    ASSERT_EQ(PQstatus(holder), CONNECTION_OK) << PQerrorMessage(holder);
    PQclear(PQexec(holder, (std::string("SELECT pg_advisory_lock(") + schema_lock_key + ")").c_str()));

    const fs::path log_path = dir.path / "second.log";
    const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const pid_t second = spawn_queen({}, {"QUEEN_DATA_DIR=" + data.string(),
                                          "PORT=" + std::to_string(broker_process::free_port()), "HOST=127.0.0.1"},
                                     log_fd, log_fd);
    ::close(log_fd);
    auto waiting_for_schema_lock = [&] {
        PGresult* r = PQexec(holder,
                             "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'advisory' AND pid <> "
                             "pg_backend_pid()");
        const bool waiting = PQresultStatus(r) == PGRES_TUPLES_OK && std::string(PQgetvalue(r, 0, 0)) != "0";
        PQclear(r);
        return waiting;
    };
    EXPECT_TRUE(eventually(waiting_for_schema_lock, 30s)) << "the second broker never reached the schema lock";
    ::kill(second, SIGTERM);
    std::this_thread::sleep_for(200ms);  // the signal is taken while the broker waits
    PQfinish(holder);                    // the schema step ends; start-up must stop after it
    const auto status = exit_status_within(second, 30s);
    std::ifstream in(log_path);
    const std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(status, 0) << log;
    EXPECT_NE(log.find("signal 15 during start-up"), std::string::npos) << log;
    EXPECT_FALSE(fs::exists(data / "postmaster.pid")) << "the embedded server was left running:\n" << log;
    stop_leftover_server(data);
}

// A request whose body has not arrived is in flight: the stop waits for it (and says so when
// the 5 s run out). A keep-alive connection idle after its answer is not: it is not counted.
TEST(GracefulStop, WaitsForRequestsInFlightNotForIdleConnections) {
    broker_process b(database_url());
    auto idle = client_of(b);
    ASSERT_EQ(idle.get("/health").status, 200);  // the connection stays open, idle
    raw_connection pending(b.port());
    ASSERT_TRUE(pending.send_all("POST /api/v1/push HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                 "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"));
    auto scraper = client_of(b);
    // The scrape counts itself: two requests in flight once the POST's header is read.
    EXPECT_TRUE(eventually([&] {
        return value_of(parse_exposition(scraper.get("/metrics/prometheus").body), "queen_http_requests_in_flight",
                        {}) == 2;
    })) << "the POST's header was never read";
    b.terminate();
    const std::string log = b.log();
    EXPECT_NE(log.find("stopping after 5 s with 1 request(s) still in flight"), std::string::npos) << log;
    EXPECT_NE(log.find("stopped"), std::string::npos) << log;
}

}  // namespace queen::test
