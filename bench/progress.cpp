#include "progress.hpp"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/core.h>

namespace queen::bench {

namespace asio = boost::asio;

asio::awaitable<void> progress_loop(asio::steady_timer& timer, const std::atomic<bool>& finished, run_control& control,
                                    const progress_view& view, steady::time_point start, std::chrono::seconds stall) {
    std::uint64_t last_work = 0;
    auto last_change = steady::now();
    while (!finished) {
        timer.expires_after(std::chrono::seconds(5));
        boost::system::error_code ec;
        co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        if (ec || finished) break;
        const double t = std::chrono::duration<double>(steady::now() - start).count();
        control.progress(fmt::format("{:.0f} s: {}", t, view.describe()));
        if (!view.watch_stall || stall.count() == 0) continue;
        const std::uint64_t work = view.work();
        if (work != last_work) {
            last_work = work;
            last_change = steady::now();
        } else if (steady::now() - last_change >= stall) {
            control.stop(stop_reason::stalled);
            break;
        }
    }
}

}  // namespace queen::bench
