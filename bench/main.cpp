// queen_bench: a load generator for the queen broker. Wires options, connections, producers
// and consumers together on one io_context, runs them, verifies and reports.
#include "consumer.hpp"
#include "http_client.hpp"
#include "ledger.hpp"
#include "options.hpp"
#include "producer.hpp"
#include "report.hpp"
#include "run_control.hpp"
#include "stats.hpp"

#include <utility>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/core.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include <sys/resource.h>

using namespace queen::bench;
namespace asio = boost::asio;

namespace {

std::string exception_text(std::exception_ptr e) {
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& ex) {
        return ex.what();
    } catch (...) {
        return "unknown exception";
    }
}

// Prints a progress line every 5 s until `finished`; stops the run when the consumers have
// settled nothing for `stall` (zero: never).
asio::awaitable<void> progress_loop(asio::steady_timer& timer, const std::atomic<bool>& finished,
                                    run_control& control, const ledger& book, steady::time_point start,
                                    bool consuming, std::chrono::seconds stall) {
    std::uint64_t last_completed = 0;
    auto last_change = steady::now();
    while (!finished) {
        timer.expires_after(std::chrono::seconds(5));
        boost::system::error_code ec;
        co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        if (ec || finished) break;
        const double t = std::chrono::duration<double>(steady::now() - start).count();
        if (consuming)
            control.progress(fmt::format("{:.0f} s: pushed {}, consumed {}", t, control.pushed(), book.completed()));
        else
            control.progress(fmt::format("{:.0f} s: pushed {}", t, control.pushed()));
        if (!consuming || stall.count() == 0) continue;
        if (book.completed() != last_completed) {
            last_completed = book.completed();
            last_change = steady::now();
        } else if (steady::now() - last_change >= stall) {
            control.stop(stop_reason::stalled);
            break;
        }
    }
}

// "0.52 0.61 0.70": the 1, 5 and 15 minute load averages.
std::string load_average() {
    std::ifstream f("/proc/loadavg");
    std::string a, b, c;
    if (!(f >> a >> b >> c)) return "unknown";
    return a + " " + b + " " + c;
}

double cpu_seconds() {
    rusage ru{};
    if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
    auto tv = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
    return tv(ru.ru_utime) + tv(ru.ru_stime);
}

int run(const options& o) {
    asio::io_context ioc(static_cast<int>(o.threads));
    boost::system::error_code ec;
    asio::ip::tcp::resolver resolver(ioc);
    auto endpoints = resolver.resolve(o.host, o.port, ec);
    if (ec) {
        fmt::print(stderr, "queen_bench: cannot resolve {}: {}\n", o.host, ec.message());
        return 2;
    }
    {  // Fail early and clearly when nothing listens.
        asio::ip::tcp::socket probe(ioc);
        asio::connect(probe, endpoints, ec);
        if (ec) {
            fmt::print(stderr, "queen_bench: cannot connect to {}: {}\n", o.url, ec.message());
            return 2;
        }
    }
    const bool consuming = o.mode != run_mode::push;
    std::random_device rd;
    const std::string run_tag = fmt::format("{:08x}", rd());
    const std::string host_header = o.host.find(':') != std::string::npos ? "[" + o.host + "]:" + o.port
                                                                           : o.host + ":" + o.port;

    ledger book(consuming ? o.messages : 0);
    run_control control(o.quiet);
    std::vector<std::unique_ptr<http_client>> clients;
    for (std::size_t i = 0; i < o.producers + o.consumers; ++i) {
        clients.push_back(std::make_unique<http_client>(asio::make_strand(ioc), endpoints, host_header));
        control.add_client(clients.back().get());
    }
    std::vector<producer_stats> pstats(o.producers);
    std::vector<consumer_stats> cstats(o.consumers);

    auto timer_strand = asio::make_strand(ioc);
    asio::steady_timer deadline(timer_strand), progress_timer(timer_strand);
    std::atomic<bool> finished{false};
    control.set_on_idle([&] {
        finished = true;
        asio::post(timer_strand, [&] {
            deadline.cancel();
            progress_timer.cancel();
        });
    });

    control.progress(condition_line(o));
    const std::string load_before = load_average();
    const auto start = steady::now();
    deadline.expires_after(std::chrono::seconds(o.max_seconds));
    deadline.async_wait([&](boost::system::error_code e) {
        if (!e) control.stop(stop_reason::time_limit);
    });
    auto on_done = [&control](std::exception_ptr e) {
        if (e) control.stop(stop_reason::fatal, "client exception: " + exception_text(e));
        control.worker_finished();
    };
    for (std::size_t i = 0; i < o.producers + o.consumers; ++i) control.worker_started();
    for (std::size_t i = 0; i < o.producers; ++i) {
        auto plan = plan_producer(static_cast<std::uint32_t>(i), o.messages, o.producers);
        asio::co_spawn(clients[i]->get_executor(), run_producer(o, plan, run_tag, *clients[i], control, pstats[i]),
                       on_done);
    }
    for (std::size_t i = 0; i < o.consumers; ++i) {
        auto& client = *clients[o.producers + i];
        asio::co_spawn(client.get_executor(), run_consumer(o, client, book, control, cstats[i]), on_done);
    }
    asio::co_spawn(timer_strand,
                   progress_loop(progress_timer, finished, control, book, start, consuming,
                                 std::chrono::seconds(o.stall_seconds)),
                   asio::detached);

    std::vector<std::thread> threads;
    for (unsigned t = 1; t < o.threads; ++t) threads.emplace_back([&ioc] { ioc.run(); });
    ioc.run();
    for (auto& t : threads) t.join();
    const auto end = steady::now();

    producer_stats produced;
    for (auto& s : pstats) produced.merge(s);
    consumer_stats consumed;
    for (auto& s : cstats) consumed.merge(std::move(s));
    std::optional<verdict> v;
    if (consuming) v = book.verify(std::move(consumed.deliveries), !o.auto_ack);

    run_facts facts;
    facts.start = start;
    facts.end = end;
    facts.completed = book.completed();
    facts.reason = control.reason();
    facts.fatal_detail = control.fatal_detail();
    facts.consumed_all_at = control.consumed_all_at();
    for (auto& c : clients) facts.reconnects += c->reconnects();
    facts.load_before = load_before;
    facts.load_after = load_average();
    facts.client_cpu_seconds = cpu_seconds();

    auto r = build_result(o, produced, consumed, v, facts);
    if (o.json) fmt::print("{}\n", r.json.dump());
    else fmt::print("{}", render_table(r));
    if (!o.json_out.empty()) {
        std::ofstream f(o.json_out, std::ios::app);
        f << r.json.dump() << '\n';
        if (!f) fmt::print(stderr, "queen_bench: cannot append to {}\n", o.json_out);
    }
    std::fflush(stdout);
    return r.exit_code;
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    try {
        if (!parse_options(argc, argv, o)) return 0;
    } catch (const usage_error& e) {
        fmt::print(stderr, "queen_bench: {}\n", e.what());
        return 2;
    }
    try {
        return run(o);
    } catch (const std::exception& e) {
        fmt::print(stderr, "queen_bench: fatal: {}\n", e.what());
        return 1;
    }
}
