#include "intervals.hpp"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

namespace queen::bench {

namespace asio = boost::asio;
using nlohmann::json;

std::vector<unsigned> interval_ends(unsigned duration_seconds, unsigned interval_seconds) {
    std::vector<unsigned> ends;
    if (duration_seconds == 0 || interval_seconds == 0) return ends;
    for (unsigned t = interval_seconds; t < duration_seconds; t += interval_seconds) ends.push_back(t);
    ends.push_back(duration_seconds);
    return ends;
}

json interval_json(const options& o, unsigned index, const interval_sample& from, const interval_sample& to,
                   const std::string& load_average) {
    const double seconds = to.at_seconds - from.at_seconds;
    const auto per_second = [seconds](std::uint64_t n) { return seconds > 0 ? static_cast<double>(n) / seconds : 0.0; };
    const std::uint64_t pushed = to.pushed - from.pushed, consumed = to.consumed - from.consumed;
    return json{{"type", "interval"},
                {"label", o.label},
                {"index", index},
                {"startSeconds", from.at_seconds},
                {"endSeconds", to.at_seconds},
                {"seconds", seconds},
                {"full", seconds + 0.5 >= static_cast<double>(o.interval_seconds)},
                {"pushed", pushed},
                {"consumed", consumed},
                {"pushPerSecond", per_second(pushed)},
                {"consumePerSecond", per_second(consumed)},
                {"pushedTotal", to.pushed},
                {"consumedTotal", to.consumed},
                {"backlog", to.pushed > to.consumed ? to.pushed - to.consumed : 0},
                {"loadAverage", load_average},
                {"wallTimeUs", wall_us()}};
}

std::string interval_text(const json& r) {
    return fmt::format("interval {} ({:.0f}-{:.0f} s): pushed {} ({:.0f}/s), consumed {} ({:.0f}/s), backlog {}, load {}",
                       r["index"].get<unsigned>(), r["startSeconds"].get<double>(), r["endSeconds"].get<double>(),
                       r["pushed"].get<std::uint64_t>(), r["pushPerSecond"].get<double>(),
                       r["consumed"].get<std::uint64_t>(), r["consumePerSecond"].get<double>(),
                       r["backlog"].get<std::uint64_t>(), r["loadAverage"].get<std::string>());
}

namespace {

// Prints one record (JSON line with --json, else text) and appends it to --json-out.
void emit(const options& o, const json& record) {
    if (o.json) fmt::print("{}\n", record.dump());
    else fmt::print("{}\n", interval_text(record));
    std::fflush(stdout);
    if (o.json_out.empty()) return;
    std::ofstream f(o.json_out, std::ios::app);
    f << record.dump() << '\n';
    if (!f) fmt::print(stderr, "queen_bench: cannot append to {}\n", o.json_out);
}

}  // namespace

asio::awaitable<void> interval_loop(asio::steady_timer& timer, const std::atomic<bool>& finished, const options& o,
                                    steady::time_point start, interval_sources sources, interval_log& log) {
    interval_sample last;
    unsigned index = 0;
    for (unsigned end : interval_ends(o.duration_seconds, o.interval_seconds)) {
        if (finished) break;
        timer.expires_at(start + std::chrono::seconds(end));
        boost::system::error_code ec;
        co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        if (ec || finished) break;  // the run ended before this interval did
        interval_sample now{std::chrono::duration<double>(steady::now() - start).count(), sources.pushed(),
                            sources.consumed()};
        json record = interval_json(o, ++index, last, now, sources.load_average());
        emit(o, record);
        {
            std::lock_guard lock(log.mutex);
            log.records.push_back(std::move(record));
        }
        last = now;
    }
}

double median_of(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

json duration_section(const options& o, interval_log& log, std::uint64_t messages_sent,
                      std::optional<double> drain_seconds) {
    std::lock_guard lock(log.mutex);
    std::vector<double> consume, push;
    for (const auto& r : log.records) {
        if (!r["full"].get<bool>()) continue;
        consume.push_back(r["consumePerSecond"].get<double>());
        push.push_back(r["pushPerSecond"].get<double>());
    }
    const auto stat = [](const std::vector<double>& v) {
        if (v.empty()) return json(nullptr);
        return json{{"median", median_of(v)},
                    {"min", *std::min_element(v.begin(), v.end())},
                    {"max", *std::max_element(v.begin(), v.end())}};
    };
    return json{{"durationSeconds", o.duration_seconds},
                {"intervalSeconds", o.interval_seconds},
                {"drainLimitSeconds", o.drain_seconds},
                {"messagesSent", messages_sent},
                {"drainSeconds", drain_seconds ? json(*drain_seconds) : json(nullptr)},
                {"fullIntervals", consume.size()},
                {"consumePerSecond", stat(consume)},
                {"pushPerSecond", stat(push)},
                {"intervals", log.records}};
}

}  // namespace queen::bench
