#pragma once
// Byte-level access to a broker for tests of what a hostile or odd client sends: a plain TCP
// connection that sends exactly the given bytes, and the broker's resident memory while
// something runs.
#include <chrono>
#include <functional>
#include <string>
#include <string_view>

namespace queen::test {

// A plain TCP connection to 127.0.0.1:port, closed at destruction.
class raw_connection {
public:
    explicit raw_connection(unsigned short port);
    ~raw_connection();
    raw_connection(const raw_connection&) = delete;
    raw_connection& operator=(const raw_connection&) = delete;

    // Sends all of `bytes`; false when the connection failed (the broker closed it).
    bool send_all(std::string_view bytes);

    // What arrives until the broker closes the connection, `quiet` passes without a byte, or
    // a whole answer without a body is read (stop_at_headers).
    std::string receive(std::chrono::milliseconds quiet = std::chrono::milliseconds(3000), bool stop_at_headers = false);

private:
    int fd_;
};

// The process's resident memory in KiB (VmRSS).
long rss_kib(int pid);

// The most VmRSS seen while `work` runs, sampled every 10 ms.
long peak_rss_kib_during(int pid, const std::function<void()>& work);

}  // namespace queen::test
