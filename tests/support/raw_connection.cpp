#include "raw_connection.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace queen::test {

raw_connection::raw_connection(unsigned short port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        if (fd_ >= 0) ::close(fd_);
        throw std::runtime_error("connect failed");
    }
}

raw_connection::~raw_connection() {
    if (fd_ >= 0) ::close(fd_);
}

bool raw_connection::send_all(std::string_view bytes) {
    while (!bytes.empty()) {
        const auto n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (n <= 0) return false;
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

std::string raw_connection::receive(std::chrono::milliseconds quiet, bool stop_at_headers) {
    std::string out;
    char buf[16384];
    for (;;) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(quiet.count())) <= 0) break;
        const auto n = ::recv(fd_, buf, sizeof buf, 0);
        if (n <= 0) break;
        out.append(buf, static_cast<std::size_t>(n));
        if (stop_at_headers && out.find("\r\n\r\n") != std::string::npos) break;
    }
    return out;
}

long rss_kib(int pid) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
    return 0;
}

long peak_rss_kib_during(int pid, const std::function<void()>& work) {
    std::atomic<bool> done{false};
    std::atomic<long> peak{rss_kib(pid)};
    std::thread sampler([&] {
        while (!done) {
            peak = std::max(peak.load(), rss_kib(pid));
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    });
    try {
        work();
    } catch (...) {
        done = true;
        sampler.join();
        throw;
    }
    done = true;
    sampler.join();
    return std::max(peak.load(), rss_kib(pid));
}

}  // namespace queen::test
