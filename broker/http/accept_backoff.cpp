#include "http/accept_backoff.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>

namespace queen::http {

bool accept_backoff::exhausted(const boost::system::error_code& ec) noexcept {
    if (ec.category() != boost::system::system_category()) return false;
    const int e = ec.value();
    return e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM;
}

accept_backoff::decision accept_backoff::failed(const boost::system::error_code& ec,
                                                std::chrono::steady_clock::time_point now) {
    decision d;
    if (exhausted(ec)) {
        d.wait = next_wait_;
        next_wait_ = std::min(next_wait_ * 2, longest_wait);
    }
    ++unlogged_;
    if (!last_log_ || now - *last_log_ >= log_interval) {
        d.log_line = unlogged_ == 1
                         ? fmt::format("accept failed: {}", ec.message())
                         : fmt::format("accept failed: {} ({} times since the last report)", ec.message(), unlogged_);
        if (d.wait.count() > 0) *d.log_line += fmt::format("; accepting again in {} ms", d.wait.count());
        last_log_ = now;
        unlogged_ = 0;
    }
    return d;
}

}  // namespace queen::http
