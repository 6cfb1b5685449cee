#include "test_cluster.hpp"

#include "server_user.hpp"
#include "test_env.hpp"

#include <fmt/core.h>
#include <libpq-fe.h>
#include <cstdlib>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <vector>

namespace queen::test {

namespace fs = std::filesystem;

namespace {

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
}

std::string quote_conf(const std::string& v) {
    std::string out = "'";
    for (char c : v) {
        if (c == '\'') out += '\'';
        out += c;
    }
    return out + "'";
}

// A fresh initdb'd data directory at `target` (which must not exist), owned by the server user:
// a copy of one initdb made per process and removed at its exit. A copy takes about 0.1 s where
// initdb takes 0.5 s of CPU, and the suites start about 50 clusters per process.
void make_data_directory(const std::string& bin_dir, const fs::path& target) {
    static std::mutex made_mutex;
    static std::unique_ptr<temp_dir> made;  // its data/ is initdb's output
    fs::path source;
    {
        std::lock_guard lock(made_mutex);
        if (!made) {
            auto dir = std::make_unique<temp_dir>("initdb");
            give_to_server_user(dir->path);
            auto [rc, out] =
                run_as_server({bin_dir + "/initdb", "-D", (dir->path / "data").string(), "-U", "postgres",
                               "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions"});
            if (rc != 0) throw std::runtime_error("test_cluster: initdb failed:\n" + out);
            made = std::move(dir);
        }
        source = made->path / "data";
    }
    auto [rc, out] = run_as_server({"/bin/cp", "-a", source.string(), target.string()});
    if (rc != 0) throw std::runtime_error("test_cluster: copying the initdb template failed:\n" + out);
}

}  // namespace

bool extension_run() {
    const char* v = std::getenv("QUEEN_TEST_EXTENSION");
    return v != nullptr && std::string(v) == "1";
}

test_cluster::test_cluster(std::map<std::string, std::string> settings, std::string database, codec_setup codec)
    : database_(std::move(database)) {
    bin_dir_ = pg_bin_dir();
    char tmpl[] = "/tmp/queen-test-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
    root_ = tmpl;
    try {
        data_dir_ = root_ / "data";
        socket_dir_ = root_ / "sock";
        log_ = root_ / "postgres.log";
        give_to_server_user(root_);
        fs::create_directory(socket_dir_);
        give_to_server_user(socket_dir_);
        port_ = free_tcp_port();

        make_data_directory(bin_dir_, data_dir_);

        settings.emplace("listen_addresses", "127.0.0.1");
        settings.emplace("port", std::to_string(port_));
        settings.emplace("unix_socket_directories", socket_dir_.string());
        settings.emplace("fsync", "off");
        settings.emplace("synchronous_commit", "off");
        settings.emplace("full_page_writes", "off");
        settings.emplace("max_connections", "200");
        settings.emplace("shared_buffers", "32MB");
        settings.emplace("track_functions", "all");
        {
            std::ofstream conf(data_dir_ / "postgresql.conf", std::ios::app);
            conf << "\n# test_cluster\n";
            for (const auto& [k, v] : settings) conf << k << " = " << quote_conf(v) << "\n";
            if (!conf) throw std::runtime_error("test_cluster: cannot write postgresql.conf");
        }
        conninfo_ = conninfo_for(database_);
        start_first_time();
        if (database_ != "postgres") {
            PGconn* c = PQconnectdb(conninfo_for("postgres").c_str());
            std::unique_ptr<PGconn, decltype(&PQfinish)> guard(c, &PQfinish);
            if (PQstatus(c) != CONNECTION_OK)
                throw std::runtime_error(std::string("test_cluster: ") + PQerrorMessage(c));
            char* ident = PQescapeIdentifier(c, database_.c_str(), database_.size());
            std::string sql = std::string("CREATE DATABASE ") + ident;
            PQfreemem(ident);
            std::unique_ptr<PGresult, decltype(&PQclear)> r(PQexec(c, sql.c_str()), &PQclear);
            if (PQresultStatus(r.get()) != PGRES_COMMAND_OK)
                throw std::runtime_error(std::string("test_cluster: CREATE DATABASE: ") + PQerrorMessage(c));
        }
        if (codec == codec_setup::extension || (codec == codec_setup::as_run && extension_run())) {
            try {
                run_sql("CREATE EXTENSION queen_ext");
            } catch (const std::exception& e) {
                throw std::runtime_error(std::string("test_cluster: ") + e.what() +
                                         " (install it first: make -f Makefile.pgxs install)");
            }
        }
    } catch (...) {
        if (running_) {
            run_as_server({bin_dir_ + "/pg_ctl", "stop", "-D", data_dir_.string(), "-m", "immediate", "-w"});
        }
        std::error_code ec;
        fs::remove_all(root_, ec);
        throw;
    }
}

std::unique_ptr<test_cluster> test_cluster::standby_of(const test_cluster& primary) {
    return std::unique_ptr<test_cluster>(new test_cluster(standby_tag{}, primary));
}

test_cluster::test_cluster(standby_tag, const test_cluster& primary) : database_(primary.database_) {
    bin_dir_ = primary.bin_dir_;
    char tmpl[] = "/tmp/queen-test-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
    root_ = tmpl;
    try {
        data_dir_ = root_ / "data";
        socket_dir_ = root_ / "sock";
        log_ = root_ / "postgres.log";
        give_to_server_user(root_);
        fs::create_directory(socket_dir_);
        give_to_server_user(socket_dir_);
        auto [rc, out] =
            run_as_server({bin_dir_ + "/pg_basebackup", "-D", data_dir_.string(), "-h", "127.0.0.1", "-p",
                           std::to_string(primary.port_), "-U", "postgres", "-R", "-X", "stream", "--no-sync",
                           "--checkpoint=fast"});  // a spread checkpoint took 90 s here
        if (rc != 0) throw std::runtime_error("test_cluster: pg_basebackup failed:\n" + out);
        port_ = free_tcp_port();  // chosen after the base backup, which can take a while
        {
            // Later lines win: the standby's own port and socket directory.
            std::ofstream conf(data_dir_ / "postgresql.conf", std::ios::app);
            conf << "\n# standby\nport = " << port_
                 << "\nunix_socket_directories = " << quote_conf(socket_dir_.string()) << "\n";
            if (!conf) throw std::runtime_error("test_cluster: cannot write the standby's postgresql.conf");
        }
        conninfo_ = conninfo_for(database_);
        start_first_time();
    } catch (...) {
        if (running_) run_as_server({bin_dir_ + "/pg_ctl", "stop", "-D", data_dir_.string(), "-m", "immediate", "-w"});
        std::error_code ec;
        fs::remove_all(root_, ec);
        throw;
    }
}

void test_cluster::promote() {
    auto [rc, out] = run_as_server({bin_dir_ + "/pg_ctl", "promote", "-D", data_dir_.string(), "-w", "-t", "60"});
    if (rc != 0) throw std::runtime_error("test_cluster: pg_ctl promote failed:\n" + out);
}

test_cluster::~test_cluster() {
    if (running_) run_as_server({bin_dir_ + "/pg_ctl", "stop", "-D", data_dir_.string(), "-m", "immediate", "-w"});
    std::error_code ec;
    fs::remove_all(root_, ec);
}

std::string test_cluster::conninfo_for(const std::string& dbname) const {
    return fmt::format("host=127.0.0.1 port={} dbname={} user=postgres connect_timeout=5", port_, dbname);
}

void test_cluster::stop() {
    if (!running_) return;
    auto [rc, out] =
        run_as_server({bin_dir_ + "/pg_ctl", "stop", "-D", data_dir_.string(), "-m", "fast", "-w", "-t", "60"});
    if (rc != 0) throw std::runtime_error("test_cluster: pg_ctl stop failed:\n" + out);
    running_ = false;
}

namespace {

// The processes whose parent is `parent` (from /proc).
std::vector<pid_t> children_of(pid_t parent) {
    std::vector<pid_t> out;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const auto name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream stat(entry.path() / "stat");
        std::string line;
        if (!std::getline(stat, line)) continue;
        const auto close = line.rfind(')');
        if (close == std::string::npos) continue;
        std::istringstream rest(line.substr(close + 2));
        char state = 0;
        long ppid = 0;
        if (rest >> state >> ppid && ppid == parent) out.push_back(static_cast<pid_t>(std::stol(name)));
    }
    return out;
}

// Whether `pid` has exited (gone, or a zombie nobody reaped yet).
bool exited(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return true;
    const auto close = line.rfind(')');
    return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

}  // namespace

void test_cluster::kill_postmaster() {
    if (!running_) return;
    std::ifstream pid_file(data_dir_ / "postmaster.pid");
    long pid = 0;
    if (!(pid_file >> pid) || pid <= 1) throw std::runtime_error("test_cluster: no postmaster.pid to kill");
    const auto backends = children_of(static_cast<pid_t>(pid));
    if (::kill(static_cast<pid_t>(pid), SIGKILL) != 0)
        throw std::runtime_error(std::string("test_cluster: kill postmaster: ") + std::strerror(errno));
    running_ = false;
    // The port refuses at once, but a backend serving an open connection answers until it
    // notices its postmaster is gone: the cluster is down once every one of them has exited.
    for (int i = 0; i < 200 && PQping(conninfo_.c_str()) != PQPING_NO_RESPONSE; ++i) ::usleep(50 * 1000);
    for (const pid_t backend : backends)
        for (int i = 0; i < 200 && !exited(backend); ++i) ::usleep(50 * 1000);
}

void test_cluster::start() {
    if (running_) return;
    auto [rc, out] =
        run_as_server({bin_dir_ + "/pg_ctl", "start", "-D", data_dir_.string(), "-l", log_.string(), "-w", "-t", "60"});
    // After a crash, the old backends may hold the shared memory a moment longer.
    for (int retry = 0; rc != 0 && retry < 20; ++retry) {
        ::usleep(250 * 1000);
        std::tie(rc, out) = run_as_server(
            {bin_dir_ + "/pg_ctl", "start", "-D", data_dir_.string(), "-l", log_.string(), "-w", "-t", "60"});
    }
    if (rc != 0) {
        std::ifstream in(log_);
        std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        throw std::runtime_error("test_cluster: pg_ctl start failed:\n" + out + "\nlog:\n" + log);
    }
    running_ = true;
}

void test_cluster::start_first_time() {
    for (int attempt = 1;; ++attempt) {
        const auto log_size = fs::exists(log_) ? fs::file_size(log_) : 0;
        auto [rc, out] = run_as_server(
            {bin_dir_ + "/pg_ctl", "start", "-D", data_dir_.string(), "-l", log_.string(), "-w", "-t", "60"});
        if (rc == 0) {
            running_ = true;
            return;
        }
        std::ifstream in(log_);
        in.seekg(static_cast<std::streamoff>(log_size));
        const std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (log.find("could not bind") == std::string::npos || attempt >= 5)
            throw std::runtime_error("test_cluster: pg_ctl start failed:\n" + out + "\nlog:\n" + log);
        // Later lines of postgresql.conf win.
        port_ = free_tcp_port();
        std::ofstream conf(data_dir_ / "postgresql.conf", std::ios::app);
        conf << "\n# the port chosen first was taken\nport = " << port_ << "\n";
        if (!conf) throw std::runtime_error("test_cluster: cannot write postgresql.conf");
        conf.close();
        conninfo_ = conninfo_for(database_);
    }
}

std::string test_cluster::run_sql(const std::string& sql) const {
    return run_sql_in(database_, sql);
}

std::string test_cluster::run_sql_in(const std::string& dbname, const std::string& sql) const {
    PGconn* c = PQconnectdb(conninfo_for(dbname).c_str());
    std::unique_ptr<PGconn, decltype(&PQfinish)> guard(c, &PQfinish);
    if (PQstatus(c) != CONNECTION_OK) throw std::runtime_error("run_sql: " + trim(PQerrorMessage(c)));
    std::unique_ptr<PGresult, decltype(&PQclear)> r(PQexec(c, sql.c_str()), &PQclear);
    auto st = PQresultStatus(r.get());
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK)
        throw std::runtime_error("run_sql(" + sql + "): " + trim(PQerrorMessage(c)));
    if (st == PGRES_TUPLES_OK && PQntuples(r.get()) > 0 && PQnfields(r.get()) > 0 && !PQgetisnull(r.get(), 0, 0))
        return PQgetvalue(r.get(), 0, 0);
    return "";
}

std::vector<std::string> test_cluster::column_in(const std::string& dbname, const std::string& sql) const {
    PGconn* c = PQconnectdb(conninfo_for(dbname).c_str());
    std::unique_ptr<PGconn, decltype(&PQfinish)> guard(c, &PQfinish);
    if (PQstatus(c) != CONNECTION_OK) throw std::runtime_error("column_in: " + trim(PQerrorMessage(c)));
    std::unique_ptr<PGresult, decltype(&PQclear)> r(PQexec(c, sql.c_str()), &PQclear);
    if (PQresultStatus(r.get()) != PGRES_TUPLES_OK || PQnfields(r.get()) < 1)
        throw std::runtime_error("column_in(" + sql + "): " + trim(PQerrorMessage(c)));
    std::vector<std::string> out;
    for (int row = 0; row < PQntuples(r.get()); ++row)
        out.emplace_back(PQgetisnull(r.get(), row, 0) ? "" : PQgetvalue(r.get(), row, 0));
    return out;
}

}  // namespace queen::test
