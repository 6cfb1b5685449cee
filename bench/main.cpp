// queen_bench: a load generator for the queen broker. Wires options, connections, producers,
// consumers and pipeline stage workers together on one io_context, runs them, verifies and
// reports.
#include "conditions.hpp"
#include "consumer.hpp"
#include "http_client.hpp"
#include "intervals.hpp"
#include "ledger.hpp"
#include "options.hpp"
#include "pipeline_stage.hpp"
#include "producer.hpp"
#include "producer_feed.hpp"
#include "progress.hpp"
#include "report.hpp"
#include "roles.hpp"
#include "run_control.hpp"
#include "stats.hpp"
#include "stream_run.hpp"
#include "streams.hpp"

#include <utility>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/core.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
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

// Consumer connection i forwards for a pipeline stage (not the last one).
bool is_stage_worker(const options& o, std::size_t i) {
    return o.mode == run_mode::pipeline && worker_stage(o, i) + 1 < o.stages;
}

// Consumer connection i's role when it is not a stage worker.
consumer_role role_of(const options& o, std::size_t i) {
    return o.mode == run_mode::pipeline ? final_stage_role(o) : consumer_role_of(o, i);
}

// What the progress lines show and what the stall check watches, per mode.
progress_view make_progress_view(const options& o, const run_control& control, const stream_set& streams,
                                 const stage_progress& forwarding) {
    progress_view v;
    v.watch_stall = o.mode != run_mode::push;
    v.work = [&streams, &forwarding] { return streams.completed() + forwarding.total(); };
    v.describe = [&o, &control, &streams, &forwarding] {
        std::string line = fmt::format("pushed {}", control.pushed());
        if (o.mode == run_mode::push) return line;
        for (std::size_t k = 0; k < forwarding.stages(); ++k)
            line += fmt::format(", s{}->s{} {}", k, k + 1, forwarding.forwarded(k));
        if (o.groups > 0) line += fmt::format(", delivered {} of {} ({} groups)", streams.completed(), streams.expected(), o.groups);
        else line += fmt::format(", consumed {}", streams.completed());
        return line;
    };
    return v;
}

// "0.52 0.61 0.70": the 1, 5 and 15 minute load averages.
std::string load_average() {
    std::ifstream f("/proc/loadavg");
    std::string a, b, c;
    if (!(f >> a >> b >> c)) return "unknown";
    return a + " " + b + " " + c;
}

// Duration mode, once every producer is done: the consumers' target becomes the seqs sent, and
// the run is done if they have all been consumed already.
void settle_target(stream_set& streams, const seq_counter& seqs, run_control& control) {
    ledger& book = streams.at(0);
    book.set_expected(seqs.taken());
    if (book.completed() < book.expected()) return;
    control.mark_consumed_all(steady::now());
    control.stop(stop_reason::done);
}

// Duration mode: the "duration" section of the result (intervals, drain after the deadline).
nlohmann::json duration_result(const options& o, interval_log& log, const seq_counter& seqs,
                               steady::time_point start, std::optional<steady::time_point> consumed_all_at) {
    std::optional<double> drain;
    if (consumed_all_at) {
        const auto deadline = start + std::chrono::seconds(o.duration_seconds);
        drain = *consumed_all_at > deadline ? std::chrono::duration<double>(*consumed_all_at - deadline).count() : 0.0;
    }
    return duration_section(o, log, seqs.taken(), drain);
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
    const bool pipeline = o.mode == run_mode::pipeline;
    const bool timed = o.duration_seconds > 0;
    std::random_device rd;
    const std::string run_tag = fmt::format("{:08x}", rd());
    const std::string host_header = o.host.find(':') != std::string::npos ? "[" + o.host + "]:" + o.port
                                                                           : o.host + ":" + o.port;

    stream_set streams(stream_count(o), consuming ? o.messages : 0);
    stage_progress forwarding(pipeline ? o.stages - 1 : 0);
    seq_counter shared_seqs(timed ? o.messages : 0);
    interval_log intervals;
    run_control control(o.quiet);
    std::vector<std::unique_ptr<http_client>> clients;
    for (std::size_t i = 0; i < o.producers + o.consumers; ++i) {
        clients.push_back(std::make_unique<http_client>(asio::make_strand(ioc), endpoints, host_header, o.headers));
        control.add_client(clients.back().get());
    }
    std::vector<producer_stats> pstats(o.producers);
    std::vector<consumer_stats> cstats(o.consumers);
    std::vector<stage_stats> sstats(o.consumers);

    auto timer_strand = asio::make_strand(ioc);
    asio::steady_timer deadline(timer_strand), progress_timer(timer_strand), interval_timer(timer_strand);
    std::atomic<bool> finished{false};
    control.set_on_idle([&] {
        finished = true;
        asio::post(timer_strand, [&] {
            deadline.cancel();
            progress_timer.cancel();
            interval_timer.cancel();
        });
    });

    const progress_view view = make_progress_view(o, control, streams, forwarding);
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
    std::atomic<std::size_t> producers_left{o.producers};
    auto on_producer_done = [&](std::exception_ptr e) {
        if (--producers_left == 0 && timed) settle_target(streams, shared_seqs, control);
        on_done(e);
    };
    for (std::size_t i = 0; i < o.producers + o.consumers; ++i) control.worker_started();
    for (std::size_t i = 0; i < o.producers; ++i) {
        const auto id = static_cast<std::uint32_t>(i);
        producer_feed feed = timed ? producer_feed(id, shared_seqs, start + std::chrono::seconds(o.duration_seconds))
                                   : producer_feed(plan_producer(id, o.messages, o.producers));
        asio::co_spawn(clients[i]->get_executor(),
                       run_producer(o, feed, producer_queue(o), run_tag, start, *clients[i], control, pstats[i]),
                       on_producer_done);
    }
    for (std::size_t i = 0; i < o.consumers; ++i) {
        auto& client = *clients[o.producers + i];
        if (is_stage_worker(o, i))
            asio::co_spawn(client.get_executor(),
                           run_stage_worker(o, worker_stage(o, i), client, forwarding, control, sstats[i]), on_done);
        else
            asio::co_spawn(client.get_executor(), run_consumer(o, role_of(o, i), client, streams, control, cstats[i]),
                           on_done);
    }
    asio::co_spawn(timer_strand,
                   progress_loop(progress_timer, finished, control, view, start, std::chrono::seconds(o.stall_seconds)),
                   asio::detached);
    if (timed) {
        interval_sources sources{[&control] { return control.pushed(); }, [&streams] { return streams.completed(); },
                                 load_average};
        asio::co_spawn(timer_strand, interval_loop(interval_timer, finished, o, start, sources, intervals), asio::detached);
    }

    std::vector<std::thread> threads;
    for (unsigned t = 1; t < o.threads; ++t) threads.emplace_back([&ioc] { ioc.run(); });
    ioc.run();
    for (auto& t : threads) t.join();
    const auto end = steady::now();

    producer_stats produced;
    for (auto& s : pstats) produced.merge(s);
    std::vector<consumer_stats> per_stream(streams.size());
    std::vector<stage_stats> per_stage(forwarding.stages());
    for (std::size_t i = 0; i < o.consumers; ++i) {
        if (is_stage_worker(o, i)) per_stage[worker_stage(o, i)].merge(sstats[i]);
        else per_stream[role_of(o, i).stream].merge(std::move(cstats[i]));
    }
    consumer_stats consumed;
    std::vector<verdict> verdicts;  // one per stream (fan-out group), empty without consumers
    for (std::size_t s = 0; s < streams.size(); ++s) {
        if (consuming) verdicts.push_back(streams.at(s).verify(std::move(per_stream[s].deliveries), !o.auto_ack));
        per_stream[s].deliveries.clear();
        consumed.merge(std::move(per_stream[s]));
    }

    run_facts facts;
    facts.start = start;
    facts.end = end;
    facts.completed = streams.completed();
    facts.reason = control.reason();
    facts.fatal_detail = control.fatal_detail();
    facts.consumed_all_at = control.consumed_all_at();
    for (auto& c : clients) facts.reconnects += c->reconnects();
    facts.load_before = load_before;
    facts.load_after = load_average();
    facts.client_cpu_seconds = cpu_seconds();
    facts.messages = timed ? shared_seqs.taken() : o.messages;
    if (timed) facts.duration = duration_result(o, intervals, shared_seqs, start, facts.consumed_all_at);

    auto r = build_result(o, produced, consumed, verdicts, per_stage, facts);
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
        if (o.mode == run_mode::stream) return run_stream(o);
        return run(o);
    } catch (const std::exception& e) {
        fmt::print(stderr, "queen_bench: fatal: {}\n", e.what());
        return 1;
    }
}
