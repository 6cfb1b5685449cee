// pgq_bench: the PgQ peer of the broker comparison. Sets the queue up, runs pgqd, runs the
// producer threads and/or the consumer thread, watches the clock, verifies and reports.
#include "consumer.hpp"
#include "options.hpp"
#include "pg.hpp"
#include "pgqd.hpp"
#include "producer.hpp"
#include "report.hpp"
#include "run_state.hpp"
#include "setup.hpp"
#include "tally.hpp"

#include <fmt/core.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

using namespace pgq_bench;

namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_signal(int sig) { g_signal = sig; }

// SIGINT and SIGTERM end the run through the normal path (report, pgqd stopped).
void install_signal_handlers() {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
}

// "0.52 0.61 0.70": the 1, 5 and 15 minute load averages.
std::string load_average() {
    std::ifstream f("/proc/loadavg");
    std::string a, b, c;
    if (!(f >> a >> b >> c)) return "unknown";
    return a + " " + b + " " + c;
}

void progress(const options& o, const std::string& line) {
    if (!o.quiet) fmt::print(stderr, "pgq_bench: {}\n", line);
}

// Watches the run until every worker has returned: signals, time limit, stall, pgqd's health,
// and a progress line every 5 s.
void monitor(const options& o, run_state& state, steady::time_point start, pgqd_process* pgqd) {
    const bool consuming = o.mode != run_mode::produce;
    auto last_progress = start, last_change = start;
    std::uint64_t last_consumed = 0;
    while (state.workers_running.load() > 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const auto now = steady::now();
        if (g_signal) state.stop(stop_reason::interrupted);
        if (now - start >= std::chrono::seconds(o.max_seconds)) state.stop(stop_reason::time_limit);
        if (pgqd && !state.stopping() && !pgqd->running())
            state.stop(stop_reason::fatal,
                       fmt::format("pgqd ended during the run ({})\n{}", pgqd->exit_description(), pgqd->log_tail(15)));
        const auto consumed = state.consumed.load();
        if (consumed != last_consumed) last_consumed = consumed, last_change = now;
        if (consuming && o.stall_seconds && now - last_change >= std::chrono::seconds(o.stall_seconds))
            state.stop(stop_reason::stalled);
        if (now - last_progress >= std::chrono::seconds(5)) {
            last_progress = now;
            const double t = std::chrono::duration<double>(now - start).count();
            progress(o, consuming ? fmt::format("{:.0f} s: inserted {}, consumed {}", t, state.inserted.load(), consumed)
                                  : fmt::format("{:.0f} s: inserted {}", t, state.inserted.load()));
        }
    }
}

// Sets up (or checks) the queue; true when the run can go on. Errors are printed.
bool prepare_queue(const options& o, connection& admin) {
    try {
        if (o.mode == run_mode::consume && !o.setup_only) {
            check_queue_ready(admin, o);
            return true;
        }
        auto s = set_up_queue(admin, o);
        progress(o, fmt::format("queue {} {}; consumer {} {}", o.queue, s.queue_created ? "created" : "exists",
                                o.consumer, s.consumer_registered ? "registered" : "already registered"));
        return true;
    } catch (const std::exception& e) {
        fmt::print(stderr, "pgq_bench: setup: {}\n", e.what());
        return false;
    }
}

int run(const options& o) {
    std::unique_ptr<connection> admin;
    try {
        admin = std::make_unique<connection>(o.conninfo, "pgq_bench setup");
    } catch (const std::exception& e) {
        fmt::print(stderr, "pgq_bench: {}\n", e.what());
        return 2;
    }
    if (!prepare_queue(o, *admin)) return 2;
    if (o.setup_only) {
        fmt::print("queue {} is set up in database {} (consumer {})\n", o.queue, admin->database(), o.consumer);
        return 0;
    }

    std::unique_ptr<pgqd_process> pgqd;
    if (o.run_pgqd) {
        try {
            pgqd_settings s;
            s.binary = o.pgqd_bin;
            s.base_connstr = conninfo_without_dbname(o.conninfo);
            s.database = admin->database();
            s.ticker_period_s = o.ticker_period_s;
            pgqd = std::make_unique<pgqd_process>(s);
            pgqd->wait_until_ticking(*admin, std::chrono::seconds(15));
            progress(o, "pgqd is ticking");
        } catch (const std::exception& e) {
            fmt::print(stderr, "pgq_bench: {}\n", e.what());
            return 2;
        }
    }
    admin.reset();

    const bool producing = o.mode != run_mode::consume;
    const bool consuming = o.mode != run_mode::produce;
    const std::size_t n_producers = producing ? o.producers : 0;
    run_state state(static_cast<std::ptrdiff_t>(n_producers + (consuming ? 1 : 0)));
    std::vector<producer_stats> pstats(n_producers);
    consumer_stats cstats;
    std::optional<tally> book;
    if (consuming) book.emplace(o.messages);

    progress(o, condition_line(o));
    std::vector<std::thread> threads;
    auto spawn = [&](auto fn) {
        state.workers_running.fetch_add(1);
        threads.emplace_back([&state, fn] {
            fn();
            state.workers_running.fetch_sub(1);
        });
    };
    for (std::size_t i = 0; i < n_producers; ++i) {
        auto plan = plan_producer(static_cast<std::uint32_t>(i), o.messages, n_producers);
        spawn([&o, plan, &state, &st = pstats[i]] { run_producer(o, plan, state, st); });
    }
    if (consuming) spawn([&] { run_consumer(o, state, *book, cstats); });

    run_facts facts;
    facts.load_before = load_average();
    facts.start = state.start_all();
    monitor(o, state, facts.start, pgqd.get());
    for (auto& t : threads) t.join();
    facts.end = steady::now();
    facts.load_after = load_average();
    facts.reason = state.reason();
    facts.detail = state.detail();
    if (pgqd) pgqd->stop();

    producer_stats produced;
    for (auto& s : pstats) produced.merge(s);
    std::optional<verdict> v;
    if (book) v = book->result();
    auto r = build_result(o, produced, cstats, v, facts);
    if (o.json) fmt::print("{}\n", r.json.dump());
    else fmt::print("{}", render_table(r));
    std::fflush(stdout);
    if (!o.json_out.empty()) {
        std::ofstream f(o.json_out, std::ios::app);
        f << r.json.dump() << '\n';
        if (!f) {
            fmt::print(stderr, "pgq_bench: cannot append to {}\n", o.json_out);
            if (r.exit_code == 0) r.exit_code = 1;
        }
    }
    return r.exit_code;
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    try {
        if (!parse_options(argc, argv, o)) return 0;
    } catch (const usage_error& e) {
        fmt::print(stderr, "pgq_bench: {}\n", e.what());
        return 2;
    }
    install_signal_handlers();
    try {
        return run(o);
    } catch (const std::exception& e) {
        fmt::print(stderr, "pgq_bench: fatal: {}\n", e.what());
        return 1;
    }
}
