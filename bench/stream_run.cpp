#include "stream_run.hpp"

#include "http_client.hpp"
#include "intervals.hpp"
#include "ledger.hpp"
#include "producer_feed.hpp"
#include "progress.hpp"
#include "retry_policy.hpp"
#include "run_control.hpp"
#include "stats.hpp"
#include "stream_report.hpp"
#include "stream_stage.hpp"

#include <utility>
#include <fmt/core.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/verb.hpp>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include <sys/resource.h>

namespace queen::bench {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;
using nlohmann::json;

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

// Connections of a phase before or after the measured run (the run's own are cancelled by then).
struct side_clients {
    std::vector<std::unique_ptr<http_client>> all;
    side_clients(asio::io_context& ioc, const asio::ip::tcp::resolver::results_type& endpoints,
                 const std::string& host_header, const options& o, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i)
            all.push_back(std::make_unique<http_client>(asio::make_strand(ioc), endpoints, host_header, o.headers));
    }
};

// Runs the coroutines spawned on ioc to their end, on this thread.
void run_phase(asio::io_context& ioc) {
    ioc.run();
    ioc.restart();
}

// One request, resent while it fails on the network, with 5xx or 429 (a few times).
asio::awaitable<http_result> request_with_retries(http_client& c, bhttp::verb verb, const std::string& target,
                                                  const std::string& body) {
    http_result res;
    const auto timeout = std::chrono::milliseconds(60000);
    for (unsigned attempt = 0; attempt < 6; ++attempt) {
        res = co_await c.request(verb, target, body, timeout);
        if (res.ok() || !retryable(res)) co_return res;
        const auto pause = retry_backoff(res, attempt);
        co_await c.sleep(pause);
    }
    co_return res;
}

// POST /streams/v1/queries: the query id into s, else the error.
asio::awaitable<void> register_query(const options& o, stream_setup& s, http_client& c, std::string& error) {
    const std::string body =
        json{{"name", s.query}, {"source_queue", s.source}, {"sink_queue", s.sink}, {"config_hash", s.config_hash}}
            .dump();
    const std::string target = o.base_path + "/streams/v1/queries";
    const http_result res = co_await request_with_retries(c, bhttp::verb::post, target, body);
    const auto answer = json::parse(res.body, nullptr, false);
    if (res.status == 409) {
        error = fmt::format("the query {} is registered with other settings ({}); use another --queue", s.query,
                            res.describe());
        co_return;
    }
    if (!res.ok() || answer.is_discarded() || !answer.is_object() || !answer.value("success", false) ||
        !answer.contains("query_id") || !answer["query_id"].is_string()) {
        error = fmt::format("POST {} answered {}", target, res.describe());
        co_return;
    }
    s.query_id = answer["query_id"].get<std::string>();
}

// The partition ids of the source queue (none when it does not exist yet).
asio::awaitable<void> source_partitions(const options& o, const stream_setup& s, http_client& c,
                                        std::vector<std::string>& ids, std::string& error) {
    const std::string target = o.base_path + "/api/v1/resources/queues/" + url_encode(s.source);
    const std::string no_body;
    const http_result res = co_await request_with_retries(c, bhttp::verb::get, target, no_body);
    if (res.status == 404) co_return;
    const auto answer = json::parse(res.body, nullptr, false);
    if (!res.ok() || answer.is_discarded() || !answer.is_object() || !answer.contains("partitions") ||
        !answer["partitions"].is_array()) {
        error = fmt::format("GET {} answered {}", target, res.describe());
        co_return;
    }
    for (const auto& p : answer["partitions"])
        if (p.is_object() && p.contains("id") && p["id"].is_string()) ids.push_back(p["id"].get<std::string>());
}

// Reads whole lanes (state/get without keys) from ids[next++] until none is left, into t.
asio::awaitable<void> read_lanes(const options& o, const stream_setup& s, http_client& c,
                                 const std::vector<std::string>& ids, std::size_t& next, state_totals& t) {
    const std::string target = o.base_path + "/streams/v1/state/get";
    while (next < ids.size() && t.error.empty()) {
        const std::string& id = ids[next++];
        const std::string body = json{{"query_id", s.query_id}, {"partition_id", id}}.dump();
        const http_result res = co_await request_with_retries(c, bhttp::verb::post, target, body);
        std::map<std::string, key_windows> state;
        std::uint64_t rows = 0;
        if (!res.ok() || !read_state_rows(res.body, state, rows)) {
            t.error = fmt::format("POST {} for partition {} answered {}", target, id, res.describe());
            co_return;
        }
        ++t.lanes_read;
        if (rows) ++t.lanes_with_state;
        t.rows += rows;
        for (const auto& [key, windows] : state)
            for (const auto& [start, count] : windows) {
                t.counts += count;
                ++t.windows;
            }
    }
}

// The stored state of every lane of the source queue, read over `parallel` connections.
state_totals read_state_totals(asio::io_context& ioc, const options& o, const stream_setup& s,
                               const asio::ip::tcp::resolver::results_type& endpoints, const std::string& host_header,
                               std::size_t parallel) {
    state_totals t;
    side_clients clients(ioc, endpoints, host_header, o, parallel);
    std::vector<std::string> ids;
    asio::co_spawn(clients.all[0]->get_executor(), source_partitions(o, s, *clients.all[0], ids, t.error),
                   asio::detached);
    run_phase(ioc);
    if (!t.error.empty()) return t;
    t.partitions = ids.size();
    std::size_t next = 0;
    for (auto& c : clients.all) asio::co_spawn(c->get_executor(), read_lanes(o, s, *c, ids, next, t), asio::detached);
    run_phase(ioc);
    t.read = t.error.empty();
    return t;
}

// GET /api/v1/resources/streams: this query's entry (null when absent or unreadable).
asio::awaitable<void> read_overview_entry(const options& o, const stream_setup& s, http_client& c, json& out) {
    const std::string target = o.base_path + "/api/v1/resources/streams";
    const std::string no_body;
    const http_result res = co_await request_with_retries(c, bhttp::verb::get, target, no_body);
    const auto answer = json::parse(res.body, nullptr, false);
    if (!res.ok() || answer.is_discarded() || !answer.is_object() || !answer.contains("streams") ||
        !answer["streams"].is_array())
        co_return;
    for (const auto& q : answer["streams"])
        if (q.is_object() && q.value("name", std::string()) == s.query) out = q;
}

// Duration mode, once every producer is done: the target becomes the seqs sent (main.cpp's rule).
void settle_target(ledger& book, const seq_counter& seqs, run_control& control) {
    book.set_expected(seqs.taken());
    if (book.completed() < book.expected()) return;
    control.mark_consumed_all(steady::now());
    control.stop(stop_reason::done);
}

}  // namespace

int run_stream(const options& o) {
    asio::io_context ioc(static_cast<int>(o.threads));
    boost::system::error_code ec;
    asio::ip::tcp::resolver resolver(ioc);
    auto endpoints = resolver.resolve(o.host, o.port, ec);
    if (ec) {
        fmt::print(stderr, "queen_bench: cannot resolve {}: {}\n", o.host, ec.message());
        return 2;
    }
    {
        asio::ip::tcp::socket probe(ioc);
        asio::connect(probe, endpoints, ec);
        if (ec) {
            fmt::print(stderr, "queen_bench: cannot connect to {}: {}\n", o.url, ec.message());
            return 2;
        }
    }
    const bool timed = o.duration_seconds > 0;
    std::random_device rd;
    const std::string run_tag = fmt::format("{:08x}", rd());
    const std::string host_header =
        o.host.find(':') != std::string::npos ? "[" + o.host + "]:" + o.port : o.host + ":" + o.port;
    const std::size_t parallel = std::max<std::size_t>(1, std::min<std::size_t>(8, o.consumers));

    // ---- before the clock starts: the query, and the state stored already (earlier runs)
    stream_report_facts facts;
    facts.setup = make_stream_setup(o);
    {
        std::string error;
        side_clients one(ioc, endpoints, host_header, o, 1);
        asio::co_spawn(one.all[0]->get_executor(), register_query(o, facts.setup, *one.all[0], error), asio::detached);
        run_phase(ioc);
        if (!error.empty()) {
            fmt::print(stderr, "queen_bench: {}\n", error);
            return 2;
        }
    }
    facts.before = read_state_totals(ioc, o, facts.setup, endpoints, host_header, parallel);
    if (!facts.before.read) {
        fmt::print(stderr, "queen_bench: reading the stored state: {}\n", facts.before.error);
        return 2;
    }

    // ---- the run
    ledger book(o.messages);
    seq_counter shared_seqs(timed ? o.messages : 0);
    interval_log intervals;
    run_control control(o.quiet);
    std::vector<std::unique_ptr<http_client>> clients;
    for (std::size_t i = 0; i < o.producers + o.consumers; ++i) {
        clients.push_back(std::make_unique<http_client>(asio::make_strand(ioc), endpoints, host_header, o.headers));
        control.add_client(clients.back().get());
    }
    std::vector<producer_stats> pstats(o.producers);
    std::vector<stream_stats> wstats(o.consumers);

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
    progress_view view;
    view.watch_stall = true;
    view.work = [&book] { return book.completed(); };
    view.describe = [&control, &book] {
        return fmt::format("pushed {}, committed by cycles {}", control.pushed(), book.completed());
    };
    control.progress(stream_condition_line(o, facts.setup));
    facts.load_before = load_average();
    const double cpu_before = cpu_seconds();
    const auto start = steady::now();
    facts.start = start;
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
        if (--producers_left == 0 && timed) settle_target(book, shared_seqs, control);
        on_done(e);
    };
    for (std::size_t i = 0; i < o.producers + o.consumers; ++i) control.worker_started();
    for (std::size_t i = 0; i < o.producers; ++i) {
        const auto id = static_cast<std::uint32_t>(i);
        producer_feed feed = timed ? producer_feed(id, shared_seqs, start + std::chrono::seconds(o.duration_seconds))
                                   : producer_feed(plan_producer(id, o.messages, o.producers));
        asio::co_spawn(clients[i]->get_executor(),
                       run_stream_producer(o, feed, facts.setup.source, run_tag, *clients[i], control, pstats[i]),
                       on_producer_done);
    }
    for (std::size_t i = 0; i < o.consumers; ++i) {
        auto& client = *clients[o.producers + i];
        asio::co_spawn(client.get_executor(), run_stream_worker(o, facts.setup, client, book, control, wstats[i]),
                       on_done);
    }
    asio::co_spawn(timer_strand,
                   progress_loop(progress_timer, finished, control, view, start, std::chrono::seconds(o.stall_seconds)),
                   asio::detached);
    if (timed) {
        interval_sources sources{[&control] { return control.pushed(); }, [&book] { return book.completed(); },
                                 load_average};
        asio::co_spawn(timer_strand, interval_loop(interval_timer, finished, o, start, sources, intervals),
                       asio::detached);
    }
    std::vector<std::thread> threads;
    for (unsigned t = 1; t < o.threads; ++t) threads.emplace_back([&ioc] { ioc.run(); });
    ioc.run();
    for (auto& t : threads) t.join();
    facts.end = steady::now();
    facts.client_cpu_seconds = cpu_seconds() - cpu_before;
    facts.load_after = load_average();
    ioc.restart();

    // ---- after: the state again, and the query's overview (source lag)
    facts.after = read_state_totals(ioc, o, facts.setup, endpoints, host_header, parallel);
    {
        side_clients one(ioc, endpoints, host_header, o, 1);
        asio::co_spawn(one.all[0]->get_executor(), read_overview_entry(o, facts.setup, *one.all[0], facts.overview),
                       asio::detached);
        run_phase(ioc);
    }

    for (auto& s : pstats) facts.produced.merge(s);
    for (auto& s : wstats) facts.worked.merge(std::move(s));
    facts.check = book.verify(std::move(facts.worked.deliveries), true);
    facts.worked.deliveries.clear();
    facts.completed = book.completed();
    facts.reason = control.reason();
    facts.fatal_detail = control.fatal_detail();
    facts.consumed_all_at = control.consumed_all_at();
    for (auto& c : clients) facts.reconnects += c->reconnects();
    facts.messages = timed ? shared_seqs.taken() : o.messages;
    if (timed) {
        std::optional<double> drain;
        if (facts.consumed_all_at) {
            const auto deadline_at = start + std::chrono::seconds(o.duration_seconds);
            drain = *facts.consumed_all_at > deadline_at
                        ? std::chrono::duration<double>(*facts.consumed_all_at - deadline_at).count()
                        : 0.0;
        }
        facts.duration = duration_section(o, intervals, shared_seqs.taken(), drain);
    }

    auto r = build_stream_result(o, facts);
    if (o.json)
        fmt::print("{}\n", r.json.dump());
    else
        fmt::print("{}", render_stream_table(r));
    if (!o.json_out.empty()) {
        std::ofstream f(o.json_out, std::ios::app);
        f << r.json.dump() << '\n';
        if (!f) fmt::print(stderr, "queen_bench: cannot append to {}\n", o.json_out);
    }
    std::fflush(stdout);
    return r.exit_code;
}

}  // namespace queen::bench
