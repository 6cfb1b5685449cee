#include "pgqd.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace pgq_bench {

namespace fs = std::filesystem;

namespace {

// The executable `bin` resolves to (a path, or searched in PATH); empty when there is none.
std::string find_executable(const std::string& bin) {
    if (bin.find('/') != std::string::npos) return access(bin.c_str(), X_OK) == 0 ? bin : std::string();
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
    for (std::string d; std::getline(dirs, d, ':');) {
        const std::string candidate = (d.empty() ? std::string(".") : d) + "/" + bin;
        if (access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    return {};
}

// The last `lines` lines of file `path` (empty when unreadable).
std::string tail_of(const fs::path& path, std::size_t lines) {
    std::ifstream f(path);
    std::deque<std::string> last;
    for (std::string line; std::getline(f, line);) {
        last.push_back(line);
        if (last.size() > lines) last.pop_front();
    }
    std::string out;
    for (auto& l : last) out += "    " + l + "\n";
    return out;
}

}  // namespace

std::string pgqd_config(const pgqd_settings& s, const std::string& dir) {
    return fmt::format(
        "[pgqd]\n"
        "base_connstr = {}\n"
        "initial_database = {}\n"
        "database_list = {}\n"
        "ticker_period = {}\n"
        "logfile = {}/pgqd.log\n"
        "pidfile = {}/pgqd.pid\n"
        "syslog = 0\n",
        s.base_connstr, s.database, s.database, s.ticker_period_s, dir, dir);
}

pgqd_process::pgqd_process(const pgqd_settings& s) {
    const std::string exe = find_executable(s.binary);
    if (exe.empty())
        throw pgqd_error(fmt::format("pgqd executable '{}' not found (run bench/peers/pgq/install.sh)", s.binary));
    if (s.database.find_first_of(",\n") != std::string::npos)
        throw pgqd_error(fmt::format("database name '{}' cannot be put in a pgqd database_list", s.database));

    const char* tmp = std::getenv("TMPDIR");
    std::string templ = fmt::format("{}/pgq_bench_pgqd.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) throw pgqd_error(fmt::format("mkdtemp {}: {}", templ, std::strerror(errno)));
    dir_ = buf.data();
    config_ = pgqd_config(s, dir_);
    const std::string ini = dir_ + "/pgqd.ini", out = dir_ + "/pgqd.out";
    {
        // The conninfo may hold a password: owner-only, like the directory mkdtemp made.
        std::ofstream f(ini);
        f << config_;
        if (!f) {
            std::error_code ec;
            fs::remove_all(dir_, ec);
            throw pgqd_error(fmt::format("cannot write {}", ini));
        }
    }
    ::chmod(ini.c_str(), 0600);

    // Everything the child needs is prepared before fork (only async-signal-safe calls after).
    std::vector<std::string> args = {exe, "-q", ini};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t parent = getpid();
    pid_ = fork();
    if (pid_ < 0) {
        std::error_code ec;
        fs::remove_all(dir_, ec);
        throw pgqd_error(fmt::format("fork: {}", std::strerror(errno)));
    }
    if (pid_ == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent) _exit(1);
        int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
        int devnull = open("/dev/null", O_RDONLY);
        if (fd >= 0) dup2(fd, STDOUT_FILENO), dup2(fd, STDERR_FILENO);
        if (devnull >= 0) dup2(devnull, STDIN_FILENO);
        execv(argv[0], argv.data());
        _exit(127);
    }
}

pgqd_process::~pgqd_process() { stop(); }

bool pgqd_process::running() {
    if (pid_ < 0 || exited_) return false;
    int st = 0;
    pid_t r = waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
        exited_ = true;
        status_ = st;
        return false;
    }
    return true;
}

std::string pgqd_process::exit_description() const {
    if (!exited_) return "running";
    if (WIFEXITED(status_)) return fmt::format("exit status {}", WEXITSTATUS(status_));
    if (WIFSIGNALED(status_)) return fmt::format("killed by signal {}", WTERMSIG(status_));
    return "ended";
}

std::string pgqd_process::log_tail(std::size_t lines) const {
    if (dir_.empty()) return {};
    return fmt::format("  pgqd.log:\n{}  console:\n{}", tail_of(dir_ + "/pgqd.log", lines),
                       tail_of(dir_ + "/pgqd.out", lines));
}

void pgqd_process::wait_until_ticking(connection& db, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    // pgqd sets no application_name; its ticker connection shows its last statement.
    const std::string sql =
        "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname = current_database() "
        "AND pid <> pg_backend_pid() AND query LIKE 'select pgq.ticker(%')";
    for (;;) {
        if (!running())
            throw pgqd_error(fmt::format("pgqd ended before ticking ({})\n{}", exit_description(), log_tail(15)));
        if (single_value(db.exec(sql).get()).value_or("f") == "t") return;
        if (std::chrono::steady_clock::now() >= deadline)
            throw pgqd_error(fmt::format("pgqd has not ticked database {} within {} ms\n{}", db.database(),
                                         timeout.count(), log_tail(15)));
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

void pgqd_process::stop() {
    if (pid_ > 0 && running()) {
        ::kill(pid_, SIGINT);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (running() && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        if (running()) {
            ::kill(pid_, SIGKILL);
            int st = 0;
            if (waitpid(pid_, &st, 0) == pid_) exited_ = true, status_ = st;
        }
    }
    pid_ = -1;
    if (!dir_.empty()) {
        std::error_code ec;
        fs::remove_all(dir_, ec);
        dir_.clear();
    }
}

}  // namespace pgq_bench
