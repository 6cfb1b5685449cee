#pragma once
// A broker process under test: build/queen started with an environment, on 127.0.0.1 and a
// free port, its output in a log file. The destructor stops it (SIGTERM, then SIGKILL).
#include <chrono>
#include <filesystem>
#include <map>
#include <string>

namespace queen::test {

class broker_process {
public:
    // Starts the broker and waits until /health answers 200, or with QUEEN_TLS_CERT in `env`
    // until it logs that it listens on https:// (throws after 30 s). An empty
    // conninfo sets no QUEEN_DATABASE_URL (the environment names the database, or none).
    broker_process(const std::string& conninfo, std::map<std::string, std::string> env = {});
    ~broker_process();
    broker_process(const broker_process&) = delete;
    broker_process& operator=(const broker_process&) = delete;

    unsigned short port() const noexcept { return port_; }
    std::string log() const;                  // everything it printed so far
    void terminate();                         // SIGTERM and wait
    void kill9();                             // SIGKILL and wait
    void restart();                           // start again with the same environment and port
    bool running() const noexcept { return pid_ > 0; }
    int pid() const noexcept { return pid_; }

    static unsigned short free_port();

private:
    void spawn();
    void wait_healthy(std::chrono::seconds limit);

    std::string conninfo_;
    std::map<std::string, std::string> env_;
    unsigned short port_ = 0;
    int pid_ = -1;
    std::filesystem::path log_path_;
};

}  // namespace queen::test
