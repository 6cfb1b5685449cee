#include "server_user.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace queen::test {

namespace fs = std::filesystem;

namespace {

struct run_as {
    bool active = false;
    uid_t uid = 0;
    gid_t gid = 0;
};

run_as server_identity() {
    run_as r;
    if (geteuid() != 0) return r;
    struct passwd* pw = getpwnam("postgres");
    if (!pw) throw std::runtime_error("tests: running as root needs a 'postgres' user");
    r.active = true;
    r.uid = pw->pw_uid;
    r.gid = pw->pw_gid;
    return r;
}

// The environment a server tool gets: ours without PG* variables, then `extra`.
std::vector<char*> server_environment(const std::vector<std::string>& extra) {
    std::vector<char*> envp;
    for (char** e = environ; e && *e; ++e)
        if (std::strncmp(*e, "PG", 2) != 0) envp.push_back(*e);
    for (const auto& e : extra) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    return envp;
}

// In a forked child: drops to the server user (when root) and executes args; never returns.
[[noreturn]] void exec_as_server(const run_as& who, std::vector<char*>& argv, std::vector<char*>& envp) {
#ifdef SYS_close_range
    syscall(SYS_close_range, 3U, ~0U, 0U);
#endif
    signal(SIGPIPE, SIG_DFL);
    if (who.active) {
        gid_t g = who.gid;
        if (setgroups(1, &g) != 0 || setgid(who.gid) != 0 || setuid(who.uid) != 0) _exit(126);
    }
    if (chdir("/") != 0) _exit(126);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
}

std::vector<char*> argv_of(const std::vector<std::string>& args) {
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    return argv;
}

}  // namespace

std::pair<int, std::string> run_as_server(const std::vector<std::string>& args, const std::vector<std::string>& env) {
    const run_as who = server_identity();
    auto argv = argv_of(args);
    auto envp = server_environment(env);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDONLY);
        dup2(devnull, 0);
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        exec_as_server(who, argv, envp);
    }
    close(fds[1]);
    std::string out;
    char buf[4096];
    for (;;) {
        ssize_t n = read(fds[0], buf, sizeof buf);
        if (n > 0)
            out.append(buf, static_cast<std::size_t>(n));
        else if (n == 0 || errno != EINTR)
            break;
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

std::string pg_bin_dir() {
    for (const char* dir : {"/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/17/bin",
                            "/usr/lib/postgresql/14/bin", "/usr/local/pgsql/bin"}) {
        if (access((fs::path(dir) / "pg_ctl").c_str(), X_OK) == 0) return dir;
    }
    throw std::runtime_error("test_cluster: PostgreSQL server binaries not found");
}

int free_tcp_port() {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error("socket failed");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        close(fd);
        throw std::runtime_error("cannot find a free TCP port");
    }
    close(fd);
    return ntohs(addr.sin_port);
}

void give_to_server_user(const fs::path& p) {
    const run_as who = server_identity();
    if (who.active && chown(p.c_str(), who.uid, who.gid) != 0)
        throw std::runtime_error("chown " + p.string() + ": " + std::strerror(errno));
}

void kill_postmaster_of(const fs::path& pgdata) {
    std::ifstream pidfile(pgdata / "postmaster.pid");
    long pid = 0;
    if (!(pidfile >> pid) || pid <= 0) return;
    // A stale file's pid may belong to another process by now.
    std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
    std::string name;
    if (!(comm >> name && name == "postgres")) return;
    // Its children first: a background worker (pg_auto_failover's health checks) or the logger
    // may outlive a killed postmaster for a long time.
    std::error_code ec;
    for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
        const auto& entry = *it;
        const std::string child = entry.path().filename().string();
        if (child.empty() || child.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream stat(entry.path() / "stat");
        std::string line;
        if (!std::getline(stat, line)) continue;
        const auto paren = line.rfind(')');  // the name in parentheses may hold spaces
        if (paren == std::string::npos) continue;
        std::istringstream rest(line.substr(paren + 2));
        char state = 0;
        long parent = 0;
        if (rest >> state >> parent && parent == pid) ::kill(static_cast<pid_t>(std::stol(child)), SIGKILL);
    }
    ::kill(static_cast<pid_t>(pid), SIGKILL);
}

pid_t spawn_as_server(const std::vector<std::string>& args, const std::vector<std::string>& env, const fs::path& log) {
    const run_as who = server_identity();
    auto argv = argv_of(args);
    auto envp = server_environment(env);
    const int out = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (out < 0) throw std::runtime_error("open " + log.string() + ": " + std::strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        close(out);
        throw std::runtime_error("fork failed");
    }
    if (pid == 0) {
        setsid();
        int devnull = open("/dev/null", O_RDONLY);
        dup2(devnull, 0);
        dup2(out, 1);
        dup2(out, 2);
        exec_as_server(who, argv, envp);
    }
    close(out);
    return pid;
}

}  // namespace queen::test
