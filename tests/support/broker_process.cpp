#include "broker_process.hpp"

#include "http_client.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

namespace queen::test {

unsigned short broker_process::free_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    ::close(fd);
    return ntohs(addr.sin_port);
}

broker_process::broker_process(const std::string& conninfo, std::map<std::string, std::string> env)
    : conninfo_(conninfo), env_(std::move(env)) {
    port_ = free_port();
    char tmpl[] = "/tmp/queen-broker-log-XXXXXX";
    int fd = ::mkstemp(tmpl);
    ::close(fd);
    log_path_ = tmpl;
    spawn();
    wait_healthy(std::chrono::seconds(30));
}

broker_process::~broker_process() {
    try {
        terminate();
    } catch (...) {
    }
    std::error_code ec;
    std::filesystem::remove(log_path_, ec);
}

void broker_process::spawn() {
    std::vector<std::string> vars;
    for (char** e = environ; e && *e; ++e) {
        std::string kv(*e);
        if (kv.rfind("PG", 0) == 0 || kv.rfind("QUEEN_", 0) == 0 || kv.rfind("PORT=", 0) == 0 ||
            kv.rfind("HOST=", 0) == 0 || kv.rfind("DB_POOL_SIZE=", 0) == 0 || kv.rfind("JWT_", 0) == 0)
            continue;
        // A variable the test sets replaces the inherited one (getenv would find the first).
        if (env_.count(kv.substr(0, kv.find('=')))) continue;
        vars.push_back(kv);
    }
    if (!conninfo_.empty()) vars.push_back("QUEEN_DATABASE_URL=" + conninfo_);
    vars.push_back("HOST=127.0.0.1");
    vars.push_back("PORT=" + std::to_string(port_));
    for (const auto& [k, v] : env_) vars.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& v : vars) envp.push_back(v.data());
    envp.push_back(nullptr);

    pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        int out = ::open(log_path_.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
        ::dup2(out, 1);
        ::dup2(out, 2);
        ::close(out);
        char* argv[] = {const_cast<char*>(QUEEN_BROKER_BINARY), nullptr};
        ::execve(QUEEN_BROKER_BINARY, argv, envp.data());
        ::_exit(127);
    }
    pid_ = pid;
}

void broker_process::wait_healthy(std::chrono::seconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            throw std::runtime_error("broker exited during start-up:\n" + log());
        }
        if (env_.count("QUEEN_TLS_CERT")) {
            // HTTPS (perhaps asking for client certificates): the start-up line says it serves.
            if (log().find("listening on https://") != std::string::npos) return;
        } else {
            try {
                http_client c("127.0.0.1", port_);
                if (c.get("/health").status == 200) return;
            } catch (...) {
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    throw std::runtime_error("broker did not become healthy:\n" + log());
}

std::string broker_process::log() const {
    std::ifstream in(log_path_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void broker_process::terminate() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 200; ++i) {
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    kill9();
}

void broker_process::kill9() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
}

void broker_process::restart() {
    if (pid_ > 0) terminate();
    spawn();
    wait_healthy(std::chrono::seconds(30));
}

}  // namespace queen::test
