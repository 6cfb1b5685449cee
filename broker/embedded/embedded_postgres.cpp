#include "embedded/embedded_postgres.hpp"

#include "schema/migrator.hpp"
#include "util/unique_fd.hpp"

#include <fmt/core.h>
#include <libpq-fe.h>

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

extern char** environ;

namespace queen::embedded {

// The identity the server runs as: ourselves, or `postgres` when we are root.
struct server_user {
    std::string name;  // empty: ourselves
    uid_t uid = 0;
    gid_t gid = 0;
    std::vector<gid_t> groups;
};

namespace fs = std::filesystem;

namespace {

struct process_result {
    int status = -1;  // exit code, 128+signal when killed
    std::string output;
};

std::string errno_text(int err) {
    return std::strerror(err);
}

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
    std::size_t i = 0;
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n')) ++i;
    return s.substr(i);
}

std::string join(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& a : argv) {
        if (!out.empty()) out += ' ';
        out += a;
    }
    return out;
}

// In the child after fork(): only async-signal-safe calls.
[[noreturn]] void child_fail(const char* what) {
    const char* err = std::strerror(errno);
    (void)!write(2, what, std::strlen(what));
    (void)!write(2, ": ", 2);
    (void)!write(2, err, std::strlen(err));
    (void)!write(2, "\n", 1);
    _exit(127);
}

void child_become(const server_user* user) {
    if (!user || user->name.empty()) return;
    if (setgroups(user->groups.size(), user->groups.data()) != 0) child_fail("setgroups");
    if (setgid(user->gid) != 0) child_fail("setgid");
    if (setuid(user->uid) != 0) child_fail("setuid");
}

void child_close_fds() {
#ifdef SYS_close_range
    if (syscall(SYS_close_range, 3U, ~0U, 0U) == 0) return;
#endif
    const long max = sysconf(_SC_OPEN_MAX);
    for (long fd = 3; fd < (max > 0 ? max : 1024); ++fd) close(static_cast<int>(fd));
}

// Runs argv (argv[0] an absolute path) as `user`, with stdin from /dev/null and stdout and
// stderr captured together. libpq's PG* environment variables are not passed on.
process_result run_process(const std::vector<std::string>& argv, const server_user* user) {
    std::vector<char*> cargv;
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    std::vector<char*> cenv;
    for (char** e = environ; e && *e; ++e) {
        if (std::strncmp(*e, "PG", 2) == 0) continue;
        cenv.push_back(*e);
    }
    cenv.push_back(nullptr);

    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) throw std::runtime_error("pipe: " + errno_text(errno));
    const pid_t pid = fork();
    if (pid < 0) {
        int err = errno;
        close(pipefd[0]);
        close(pipefd[1]);
        throw std::runtime_error(fmt::format("cannot run {}: fork: {}", argv[0], errno_text(err)));
    }
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull < 0 || dup2(devnull, 0) < 0) child_fail("stdin");
        if (dup2(pipefd[1], 1) < 0 || dup2(pipefd[1], 2) < 0) child_fail("dup2");
        child_close_fds();
        signal(SIGPIPE, SIG_DFL);
        child_become(user);
        if (chdir("/") != 0) child_fail("chdir");
        execve(cargv[0], cargv.data(), cenv.data());
        child_fail(cargv[0]);
    }
    close(pipefd[1]);
    process_result res;
    char buf[4096];
    for (;;) {
        ssize_t n = read(pipefd[0], buf, sizeof buf);
        if (n > 0) {
            res.output.append(buf, static_cast<std::size_t>(n));
        } else if (n == 0 || errno != EINTR) {
            break;
        }
    }
    close(pipefd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) throw std::runtime_error("waitpid: " + errno_text(errno));
    }
    if (WIFEXITED(status))
        res.status = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        res.status = 128 + WTERMSIG(status);
    return res;
}

// Exit status 0 when `user` can search every directory in `dirs` (in order), else the
// 1-based index of the first one it cannot.
int first_unreachable(const std::vector<std::string>& dirs, const server_user& user) {
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork: " + errno_text(errno));
    if (pid == 0) {
        child_become(&user);
        for (std::size_t i = 0; i < dirs.size(); ++i) {
            if (access(dirs[i].c_str(), X_OK) != 0) _exit(static_cast<int>(std::min<std::size_t>(i + 1, 255)));
        }
        _exit(0);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) throw std::runtime_error("waitpid: " + errno_text(errno));
    }
    if (!WIFEXITED(status)) throw std::runtime_error("permission check process failed");
    return WEXITSTATUS(status);
}

std::optional<std::string> find_in_path(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::stringstream ss(path ? path : "/usr/local/bin:/usr/bin:/bin");
    std::string dir;
    while (std::getline(ss, dir, ':')) {
        if (dir.empty()) continue;
        fs::path p = fs::path(dir) / name;
        if (access(p.c_str(), X_OK) == 0) return p.string();
    }
    return std::nullopt;
}

bool has_server_binaries(const fs::path& dir) {
    for (const char* b : {"initdb", "pg_ctl", "postgres"}) {
        if (access((dir / b).c_str(), X_OK) != 0) return false;
    }
    return true;
}

std::string find_bin_dir(const std::string& configured) {
    if (!configured.empty()) {
        if (!has_server_binaries(configured))
            throw std::runtime_error(
                fmt::format("PostgreSQL server binaries (initdb, pg_ctl, postgres) not found in {}", configured));
        return configured;
    }
    std::vector<std::string> tried;
    if (auto pg_config = find_in_path("pg_config")) {
        auto res = run_process({*pg_config, "--bindir"}, nullptr);
        std::string dir = trim(res.output);
        if (res.status == 0 && !dir.empty()) {
            if (has_server_binaries(dir)) return dir;
            tried.push_back(dir);
        }
    }
    // Debian/Ubuntu layout: the newest /usr/lib/postgresql/<major>/bin.
    std::vector<std::pair<int, fs::path>> versions;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
        int major = std::atoi(entry.path().filename().c_str());
        if (major > 0) versions.emplace_back(major, entry.path() / "bin");
    }
    std::sort(versions.rbegin(), versions.rend());
    for (const auto& [major, dir] : versions) {
        if (has_server_binaries(dir)) return dir.string();
        tried.push_back(dir.string());
    }
    for (const char* dir : {"/usr/local/pgsql/bin", "/usr/pgsql/bin"}) {
        if (has_server_binaries(dir)) return dir;
    }
    if (auto initdb = find_in_path("initdb")) {
        fs::path dir = fs::path(*initdb).parent_path();
        if (has_server_binaries(dir)) return dir.string();
    }
    throw std::runtime_error(
        fmt::format("PostgreSQL server binaries (initdb, pg_ctl, postgres) not found{}{}; install the PostgreSQL "
                    "server (e.g. apt-get install postgresql-15) or configure its bin directory",
                    tried.empty() ? "" : " (looked in ", tried.empty() ? "" : join(tried) + ")"));
}

std::uint32_t fnv1a(const std::string& s) {
    std::uint32_t h = 2166136261u;
    for (unsigned char c : s) {
        h ^= c;
        h *= 16777619u;
    }
    return h;
}

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string log_tail(const fs::path& log, std::size_t max = 3000) {
    std::string all = read_file(log);
    if (all.size() > max) all = "..." + all.substr(all.size() - max);
    return trim(all);
}

void chown_or_throw(const fs::path& p, const server_user& user) {
    if (user.name.empty()) return;
    if (chown(p.c_str(), user.uid, user.gid) != 0)
        throw std::runtime_error(
            fmt::format("cannot give {} to the {} user: {}", p.string(), user.name, errno_text(errno)));
}

// Every directory from / down to `dir` must be searchable by the server user.
void check_reachable(const fs::path& dir, const server_user& user) {
    std::vector<std::string> dirs;
    fs::path acc;
    for (const auto& part : dir) {
        acc /= part;
        dirs.push_back(acc.string());
    }
    const int bad = first_unreachable(dirs, user);
    if (bad == 0) return;
    const std::string blocked = dirs[static_cast<std::size_t>(bad - 1)];
    throw std::runtime_error(fmt::format(
        "the PostgreSQL data directory {} is not reachable by the '{}' user that runs the server: it cannot "
        "enter {}. Choose a data directory that user can reach with QUEEN_DATA_DIR (for example "
        "/var/lib/queen/pgdata), or make {} traversable (chmod o+x)",
        dir.string(), user.name, blocked, blocked));
}

// Creates the missing directories of `dir` as 0755 whatever the umask, so that the server
// user can traverse the ones we created.
void create_parents(const fs::path& dir) {
    fs::path acc;
    for (const auto& part : dir) {
        acc /= part;
        if (mkdir(acc.c_str(), 0755) == 0) {
            (void)chmod(acc.c_str(), 0755);
        } else if (errno != EEXIST) {
            throw std::runtime_error(
                fmt::format("cannot create the directory {}: {}", acc.string(), errno_text(errno)));
        }
    }
}

struct pid_file {
    long pid = 0;
    int port = 0;
    std::string socket_dir;
};

std::optional<pid_file> read_pid_file(const fs::path& data_dir) {
    std::ifstream in(data_dir / "postmaster.pid");
    if (!in) return std::nullopt;
    std::vector<std::string> lines;
    std::string line;
    while (std::getline(in, line)) lines.push_back(line);
    if (lines.size() < 5) return std::nullopt;
    pid_file pf;
    pf.pid = std::atol(lines[0].c_str());
    pf.port = std::atoi(lines[3].c_str());
    pf.socket_dir = trim(lines[4]);
    return pf;
}

std::string make_conninfo(const fs::path& socket_dir, int port, const std::string& dbname) {
    return fmt::format("host={} port={} dbname={} user=postgres", socket_dir.string(), port, dbname);
}

int server_major_version(const std::string& bin_dir) {
    auto res = run_process({(fs::path(bin_dir) / "postgres").string(), "--version"}, nullptr);
    // "postgres (PostgreSQL) 15.6 (Debian 15.6-0+deb12u1)"
    auto pos = res.output.find(") ");
    if (res.status != 0 || pos == std::string::npos) return 0;
    return std::atoi(res.output.c_str() + pos + 2);
}

server_user resolve_server_user() {
    server_user u;
    if (geteuid() != 0) {
        u.uid = geteuid();
        u.gid = getegid();
        return u;
    }
    struct passwd* pw = getpwnam("postgres");
    if (!pw)
        throw std::runtime_error(
            "running as root, but there is no 'postgres' system user to run the embedded PostgreSQL server "
            "(PostgreSQL refuses to run as root); create it (e.g. install the postgresql package) or run the "
            "broker as an ordinary user");
    u.name = "postgres";
    u.uid = pw->pw_uid;
    u.gid = pw->pw_gid;
    int n = 64;
    u.groups.resize(static_cast<std::size_t>(n));
    if (getgrouplist(pw->pw_name, pw->pw_gid, u.groups.data(), &n) < 0) {
        u.groups.resize(static_cast<std::size_t>(n));
        getgrouplist(pw->pw_name, pw->pw_gid, u.groups.data(), &n);
    }
    u.groups.resize(static_cast<std::size_t>(std::max(n, 0)));
    if (u.groups.empty()) u.groups.push_back(u.gid);
    return u;
}

// A short private directory for the server's unix socket (socket paths are limited to
// 107 bytes, so it cannot live under a long data directory path).
fs::path prepare_socket_dir(const fs::path& data_dir, const server_user& user) {
    const fs::path dir = fmt::format("/tmp/queen-pg-{:08x}", fnv1a(data_dir.string()));
    if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
        throw std::runtime_error(
            fmt::format("cannot create the socket directory {}: {}", dir.string(), errno_text(errno)));
    struct stat st {};
    if (lstat(dir.c_str(), &st) != 0)
        throw std::runtime_error(
            fmt::format("cannot inspect the socket directory {}: {}", dir.string(), errno_text(errno)));
    if (!S_ISDIR(st.st_mode))
        throw std::runtime_error(
            fmt::format("the socket directory {} exists but is not a directory; remove it", dir.string()));
    if (st.st_uid != user.uid) {
        if (geteuid() == 0) {
            chown_or_throw(dir, user);
        } else {
            throw std::runtime_error(fmt::format("the socket directory {} belongs to another user (uid {}); remove it",
                                                 dir.string(), st.st_uid));
        }
    }
    if (chmod(dir.c_str(), 0700) != 0)
        throw std::runtime_error(
            fmt::format("cannot chmod the socket directory {}: {}", dir.string(), errno_text(errno)));
    return dir;
}

bool wait_for_ping(const std::string& conninfo, std::chrono::seconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        if (PQping(conninfo.c_str()) == PQPING_OK) return true;
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

}  // namespace

fs::path embedded_postgres::default_data_dir() {
    if (geteuid() == 0) return "/var/lib/queen/pgdata";
    if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg == '/') return fs::path(xdg) / "queen" / "pgdata";
    std::string home;
    if (const char* h = std::getenv("HOME"); h && *h) {
        home = h;
    } else if (struct passwd* pw = getpwuid(getuid()); pw && pw->pw_dir) {
        home = pw->pw_dir;
    } else {
        throw std::runtime_error("cannot determine a data directory: HOME is not set; set QUEEN_DATA_DIR");
    }
    return fs::path(home) / ".local" / "share" / "queen" / "pgdata";
}

namespace {

// Until a server runs, a failure leaves no empty socket directory behind.
struct unused_socket_dir {
    fs::path dir;
    bool armed = true;
    ~unused_socket_dir() {
        if (armed) (void)rmdir(dir.c_str());
    }
};

}  // namespace

// Start-up, step by step: settle the options, the data directory, the server log, the
// cluster (initdb or a version check), then adopt a server left running or start one, and
// create the database.
embedded_postgres::embedded_postgres(embedded_options options) : options_(std::move(options)) {
    settle_options();
    const server_user user = resolve_server_user();
    run_as_ = user.name;
    const bool initialized = prepare_data_dir(user);
    const fs::path log = prepare_server_log(user);
    socket_dir_ = prepare_socket_dir(options_.data_dir, user);
    unused_socket_dir socket_guard{socket_dir_};
    if (!initialized)
        init_cluster(user);
    else
        check_cluster_version();
    if (!adopt_running_server(user, socket_guard.armed)) {
        start_server(user, log);
        socket_guard.armed = false;
    }
    try {
        schema::create_database_if_missing(make_conninfo(socket_dir_, port_, "postgres"), options_.database);
    } catch (...) {
        if (!adopted_) {
            try {
                stop();
            } catch (...) {
            }
        }
        throw;
    }
    conninfo_ = make_conninfo(socket_dir_, port_, options_.database);
}

void embedded_postgres::settle_options() {
    if (options_.data_dir.empty()) options_.data_dir = default_data_dir();
    options_.data_dir = fs::absolute(options_.data_dir).lexically_normal();
    if (options_.data_dir.has_filename() == false) options_.data_dir = options_.data_dir.parent_path();
    if (options_.database.empty()) options_.database = "queen";
    options_.bin_dir = find_bin_dir(options_.bin_dir);
}

bool embedded_postgres::prepare_data_dir(const server_user& user) {
    fs::path data = options_.data_dir;
    create_parents(data.parent_path());
    if (mkdir(data.c_str(), 0700) != 0 && errno != EEXIST)
        throw std::runtime_error(
            fmt::format("cannot create the data directory {}: {}", data.string(), errno_text(errno)));
    data = fs::canonical(data);
    options_.data_dir = data;
    const bool initialized = fs::exists(data / "PG_VERSION");
    struct stat st {};
    if (stat(data.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        throw std::runtime_error(fmt::format("the data directory {} is not a directory", data.string()));
    if (!initialized) {
        if (!fs::is_empty(data))
            throw std::runtime_error(fmt::format(
                "the data directory {} is not empty and is not a PostgreSQL data directory; choose another with "
                "QUEEN_DATA_DIR",
                data.string()));
        if (st.st_uid != user.uid) chown_or_throw(data, user);
    } else if (st.st_uid != user.uid) {
        throw std::runtime_error(fmt::format(
            "the data directory {} belongs to uid {}, but the server runs as {} (uid {}); fix its ownership or "
            "choose another with QUEEN_DATA_DIR",
            data.string(), st.st_uid, user.name.empty() ? "the current user" : user.name, user.uid));
    }
    if (!user.name.empty()) check_reachable(data, user);
    return initialized;
}

// The server log, next to the data directory, writable by the server user.
fs::path embedded_postgres::prepare_server_log(const server_user& user) {
    const fs::path log = options_.data_dir.parent_path() / "postgres.log";
    util::unique_fd fd(open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640));
    if (!fd)
        throw std::runtime_error(fmt::format("cannot create the server log {}: {}", log.string(), errno_text(errno)));
    if (!user.name.empty() && fchown(fd.get(), user.uid, user.gid) != 0)
        throw std::runtime_error(fmt::format("cannot give {} to {}: {}", log.string(), user.name, errno_text(errno)));
    return log;
}

void embedded_postgres::init_cluster(const server_user& user) {
    const fs::path& data = options_.data_dir;
    auto res = run_process(
        {(fs::path(options_.bin_dir) / "initdb").string(), "-D", data.string(), "-U", "postgres", "--encoding=UTF8",
         "--locale=C", "--auth-local=trust", "--auth-host=reject", "--data-checksums", "--no-instructions"},
        &user);
    if (res.status != 0)
        throw std::runtime_error(
            fmt::format("initdb failed for {} (exit status {}):\n{}", data.string(), res.status, trim(res.output)));
}

void embedded_postgres::check_cluster_version() {
    const fs::path& data = options_.data_dir;
    const std::string version = trim(read_file(data / "PG_VERSION"));
    const int major = server_major_version(options_.bin_dir);
    if (major > 0 && std::atoi(version.c_str()) != major)
        throw std::runtime_error(fmt::format(
            "the data directory {} was created by PostgreSQL {}, but the server binaries in {} are version {}; "
            "use matching binaries or choose another data directory with QUEEN_DATA_DIR",
            data.string(), version, options_.bin_dir, major));
}

// A server left running for this data directory (a broker killed with -9) is adopted: true
// then, with port_ and socket_dir_ set to its own (our unused socket directory removed).
bool embedded_postgres::adopt_running_server(const server_user& user, bool& own_socket_dir_unused) {
    const fs::path& data = options_.data_dir;
    const std::string pg_ctl = (fs::path(options_.bin_dir) / "pg_ctl").string();
    if (!fs::exists(data / "postmaster.pid")) return false;
    if (run_process({pg_ctl, "status", "-D", data.string()}, &user).status != 0) return false;
    auto pf = read_pid_file(data);
    if (!pf || pf->socket_dir.empty() || pf->port <= 0)
        throw std::runtime_error(fmt::format(
            "a PostgreSQL server (see {}/postmaster.pid) is running on {} without a unix socket; stop it with "
            "`{} stop -D {}`",
            data.string(), data.string(), pg_ctl, data.string()));
    port_ = pf->port;
    if (fs::path(pf->socket_dir) != socket_dir_) {
        (void)rmdir(socket_dir_.c_str());  // ours is not used
        own_socket_dir_unused = false;
    }
    socket_dir_ = pf->socket_dir;
    if (!wait_for_ping(make_conninfo(socket_dir_, port_, "postgres"), std::chrono::seconds(60)))
        throw std::runtime_error(
            fmt::format("a PostgreSQL server (pid {}) is running on {} but does not answer on {}; stop it with "
                        "`{} stop -D {}`",
                        pf->pid, data.string(), socket_dir_.string(), pg_ctl, data.string()));
    adopted_ = true;
    own_socket_dir_unused = false;
    return true;
}

void embedded_postgres::start_server(const server_user& user, const fs::path& log) {
    const fs::path& data = options_.data_dir;
    const std::string pg_ctl = (fs::path(options_.bin_dir) / "pg_ctl").string();
    const std::string server_options = fmt::format(
        "-c listen_addresses='' -c port={} -c unix_socket_directories='{}' "
        "-c unix_socket_permissions=0700 -c fsync=on",
        port_, socket_dir_.string());
    auto res = run_process(
        {pg_ctl, "start", "-w", "-t", "120", "-D", data.string(), "-l", log.string(), "-o", server_options}, &user);
    if (res.status != 0)
        throw std::runtime_error(
            fmt::format("cannot start PostgreSQL on {} (pg_ctl exit status {}):\n{}\n"
                        "server log {}:\n{}",
                        data.string(), res.status, trim(res.output), log.string(), log_tail(log)));
}

embedded_postgres::~embedded_postgres() {
    try {
        stop();
    } catch (...) {
    }
}

void embedded_postgres::stop() {
    if (stopped_) return;
    stopped_ = true;
    const server_user user = resolve_server_user();
    const std::string pg_ctl = (fs::path(options_.bin_dir) / "pg_ctl").string();
    const std::string data = options_.data_dir.string();
    // Already gone (e.g. stopped by another instance that adopted it): nothing to do.
    if (fs::exists(options_.data_dir / "postmaster.pid") &&
        run_process({pg_ctl, "status", "-D", data}, &user).status == 0) {
        auto res = run_process({pg_ctl, "stop", "-D", data, "-m", "fast", "-w", "-t", "120"}, &user);
        if (res.status != 0 && run_process({pg_ctl, "status", "-D", data}, &user).status == 0)
            throw std::runtime_error(fmt::format("cannot stop PostgreSQL on {} (pg_ctl exit status {}):\n{}", data,
                                                 res.status, trim(res.output)));
    }
    // The private socket directory is empty once the server is gone.
    if (!socket_dir_.empty()) (void)rmdir(socket_dir_.c_str());
}

std::string embedded_postgres::psql_command() const {
    std::string psql = "psql";
    if (!find_in_path("psql")) psql = (fs::path(options_.bin_dir) / "psql").string();
    return fmt::format("{} \"{}\"", psql, conninfo_);
}

}  // namespace queen::embedded
