#pragma once
// What the accept loop does after a failed accept. When the process or the system is out of
// descriptors or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM), accepting again at once fails again
// at once: it waits 50 ms, doubling to 1 s while the failures last, and starts again from 50 ms
// after an accept succeeds. Any other failure (a connection reset before it was accepted) is
// retried at once. Failures are logged at most once a second, with how many there were.
#include <boost/system/error_code.hpp>

#include <chrono>
#include <optional>
#include <string>

namespace queen::http {

class accept_backoff {
public:
    static constexpr std::chrono::milliseconds first_wait{50};
    static constexpr std::chrono::milliseconds longest_wait{1000};
    static constexpr std::chrono::seconds log_interval{1};

    struct decision {
        std::chrono::milliseconds wait{0};    // before the next accept
        std::optional<std::string> log_line;  // to log now (warn)
    };

    // After an accept failed with `ec` at `now`.
    decision failed(const boost::system::error_code& ec, std::chrono::steady_clock::time_point now);
    // After an accept succeeded.
    void succeeded() noexcept { next_wait_ = first_wait; }

    // True for the failures that wait: out of descriptors or memory.
    static bool exhausted(const boost::system::error_code& ec) noexcept;

private:
    std::chrono::milliseconds next_wait_ = first_wait;
    std::optional<std::chrono::steady_clock::time_point> last_log_;
    std::size_t unlogged_ = 0;
};

}  // namespace queen::http
