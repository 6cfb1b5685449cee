#include "stream_stage.hpp"

#include "ack_request.hpp"
#include "consumer.hpp"
#include "pop_step.hpp"
#include "retry_policy.hpp"

#include <fmt/format.h>
#include <simdjson.h>
#include <boost/beast/http/verb.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iterator>
#include <limits>
#include <string_view>
#include <unordered_map>

namespace queen::bench {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;

stream_setup make_stream_setup(const options& o) {
    stream_setup s;
    s.query = o.queue;
    s.source = o.queue;
    s.sink = o.queue + "-sink";
    s.group = "streams." + s.query;
    s.config_hash = fmt::format("queen_bench tumbling count v1: window {} ms, lateness {} ms, keys {}", o.window_ms,
                                o.lateness_ms, o.stream_keys);
    return s;
}

void stream_stats::merge(stream_stats&& o) {
    pop.merge(o.pop);
    pop_empty.merge(o.pop_empty);
    state_get.merge(o.state_get);
    cycle.merge(o.cycle);
    e2e.merge(o.e2e);
    pops += o.pops;
    empty_pops += o.empty_pops;
    messages += o.messages;
    failed_requests += o.failed_requests;
    retries += o.retries;
    bytes_received += o.bytes_received;
    malformed += o.malformed;
    lane_batches += o.lane_batches;
    state_gets += o.state_gets;
    state_rows_read += o.state_rows_read;
    cycles += o.cycles;
    failed_cycles += o.failed_cycles;
    resent_cycles += o.resent_cycles;
    lost_answers += o.lost_answers;
    lease_releases += o.lease_releases;
    release_failures += o.release_failures;
    upserts += o.upserts;
    deletes += o.deletes;
    windows_emitted += o.windows_emitted;
    counts_emitted += o.counts_emitted;
    counted += o.counted;
    committed += o.committed;
    sink_queued += o.sink_queued;
    sink_duplicates += o.sink_duplicates;
    sink_other += o.sink_other;
    for (const auto& [error, n] : o.failures) failures[error] += n;
    span.merge(o.span);
    if (deliveries.empty())
        deliveries = std::move(o.deliveries);
    else
        deliveries.insert(deliveries.end(), o.deliveries.begin(), o.deliveries.end());
}

// ---- the computation

namespace {

std::string json_string(const std::string& s) {
    return nlohmann::json(s).dump();
}

std::int64_t window_start(std::int64_t ts, std::int64_t width) {
    const std::int64_t r = ts % width;
    return r < 0 ? ts - r - width : ts - r;
}

}  // namespace

bool read_stream_event(const std::string& data, stream_event& out) {
    thread_local simdjson::dom::parser parser;
    simdjson::dom::object obj;
    if (parser.parse(data).get_object().get(obj) != simdjson::SUCCESS) return false;
    std::string_view key;
    std::int64_t ts = 0;
    if (obj["key"].get_string().get(key) != simdjson::SUCCESS || obj["ts"].get_int64().get(ts) != simdjson::SUCCESS)
        return false;
    out.key.assign(key);
    out.ts = ts;
    return true;
}

bool read_state_rows(const std::string& body, std::map<std::string, key_windows>& state, std::uint64_t& rows) {
    thread_local simdjson::dom::parser parser;
    rows = 0;
    simdjson::dom::object answer;
    simdjson::dom::array list;
    bool success = false;
    if (parser.parse(body).get_object().get(answer) != simdjson::SUCCESS ||
        answer["success"].get_bool().get(success) != simdjson::SUCCESS || !success ||
        answer["rows"].get_array().get(list) != simdjson::SUCCESS)
        return false;
    for (simdjson::dom::element row : list) {
        std::string_view key;
        simdjson::dom::array windows;
        if (row["key"].get_string().get(key) != simdjson::SUCCESS ||
            row["value"]["windows"].get_array().get(windows) != simdjson::SUCCESS)
            return false;
        key_windows& w = state[std::string(key)];
        for (simdjson::dom::element pair : windows) {
            simdjson::dom::array sc;
            std::int64_t start = 0;
            std::uint64_t count = 0;
            if (pair.get_array().get(sc) != simdjson::SUCCESS || sc.size() != 2 ||
                sc.at(0).get_int64().get(start) != simdjson::SUCCESS ||
                sc.at(1).get_uint64().get(count) != simdjson::SUCCESS)
                return false;
            w[start] += count;
        }
        ++rows;
    }
    return true;
}

std::string windows_value(const key_windows& w) {
    std::string out = "{\"windows\":[";
    bool first = true;
    for (const auto& [start, count] : w) {
        if (!first) out += ',';
        first = false;
        fmt::format_to(std::back_inserter(out), "[{},{}]", start, count);
    }
    out += "]}";
    return out;
}

lane_plan plan_lane(const options& o, const std::string& sink, const std::string& partition,
                    std::map<std::string, key_windows>& state, const std::vector<stream_event>& events) {
    lane_plan p;
    const auto width = static_cast<std::int64_t>(o.window_ms);
    std::int64_t max_ts = std::numeric_limits<std::int64_t>::min();
    for (const auto& e : events) {
        ++state[e.key][window_start(e.ts, width)];
        max_ts = std::max(max_ts, e.ts);
        ++p.counted;
    }
    p.state_ops = "[";
    p.push_items = "[";
    if (events.empty()) {
        p.state_ops += ']';
        p.push_items += ']';
        return p;
    }
    const std::int64_t cutoff = max_ts - static_cast<std::int64_t>(o.lateness_ms);
    const std::string sink_json = json_string(sink), partition_json = json_string(partition);
    auto ops = std::back_inserter(p.state_ops);
    auto pushes = std::back_inserter(p.push_items);
    for (auto& [key, windows] : state) {
        const std::string key_json = json_string(key);
        for (auto it = windows.begin(); it != windows.end() && it->first + width <= cutoff;) {
            if (p.windows++) p.push_items += ',';
            fmt::format_to(pushes,
                           "{{\"queue\":{},\"partition\":{},\"payload\":{{\"key\":{},\"windowStart\":{},"
                           "\"windowEnd\":{},\"count\":{}}}}}",
                           sink_json, partition_json, key_json, it->first, it->first + width, it->second);
            p.counts += it->second;
            it = windows.erase(it);
        }
        if (p.upserts + p.deletes) p.state_ops += ',';
        if (windows.empty()) {
            fmt::format_to(ops, "{{\"type\":\"delete\",\"key\":{}}}", key_json);
            ++p.deletes;
        } else {
            fmt::format_to(ops, "{{\"type\":\"upsert\",\"key\":{},\"value\":{}}}", key_json, windows_value(windows));
            ++p.upserts;
        }
    }
    p.state_ops += ']';
    p.push_items += ']';
    return p;
}

// ---- the producer

namespace {

// {"items":[…]} for seqs [first, first + n): partition p{seq % P}, key k{(seq / P) % K}.
std::string build_stream_push_body(const options& o, const std::string& queue_json, const std::string& run_tag,
                                   std::uint32_t producer, std::uint64_t first, std::uint64_t n) {
    std::string body;
    body.reserve(n * (queue_json.size() + 160) + 16);
    auto out = std::back_inserter(body);
    body += "{\"items\":[";
    const std::int64_t sent = wall_us();
    const std::int64_t ts = sent / 1000;
    for (std::uint64_t seq = first; seq < first + n; ++seq) {
        if (seq != first) body += ',';
        fmt::format_to(out,
                       "{{\"queue\":{},\"partition\":\"p{}\",\"transactionId\":\"{}-{}\",\"payload\":{{\"key\":\"k{}\","
                       "\"ts\":{},\"producer\":{},\"seq\":{},\"sentUs\":{}}}}}",
                       queue_json, seq % o.partitions, run_tag, seq, (seq / o.partitions) % o.stream_keys, ts, producer,
                       seq, sent);
    }
    body += "]}";
    return body;
}

// Reads a push answer into the stats; reports what is wrong.
void read_push_answer(const options& o, const http_result& res, std::uint64_t first, std::uint64_t n, unsigned attempt,
                      std::vector<std::int64_t>& last_offset, run_control& control, producer_stats& st) {
    auto answer = nlohmann::json::parse(res.body, nullptr, false);
    if (answer.is_discarded() || !answer.is_array()) {
        st.bad_answers += n;
        control.report_error("push answer is not a JSON array", res.describe());
        return;
    }
    if (answer.size() != n) {
        control.report_error("push answer has the wrong number of items",
                             fmt::format("{} items for {} sent", answer.size(), n));
        if (answer.size() < n) st.bad_answers += n - answer.size();
    }
    for (std::size_t i = 0; i < std::min<std::size_t>(n, answer.size()); ++i) {
        const auto& a = answer[i];
        const std::string status = a.is_object() ? a.value("status", std::string()) : std::string();
        if (status == "queued") {
            ++st.queued;
            const auto partition = (first + i) % o.partitions;
            const auto offset = a.value("offset", std::int64_t(0));
            if (offset <= last_offset[partition]) ++st.offset_regressions;
            last_offset[partition] = std::max(last_offset[partition], offset);
        } else if (status == "buffered") {
            ++st.buffered;
        } else if (status == "duplicate") {
            if (attempt > 0)
                ++st.duplicate_after_retry;
            else {
                ++st.duplicate_answers;
                control.report_error("fresh push item answered duplicate", a.dump());
            }
        } else {
            ++st.bad_answers;
            control.report_error("unexpected push item answer", a.dump());
        }
    }
}

}  // namespace

asio::awaitable<void> run_stream_producer(const options& o, producer_feed feed, std::string queue, std::string run_tag,
                                          http_client& client, run_control& control, producer_stats& st) {
    const std::string target = o.base_path + "/api/v1/push";
    const std::string queue_json = json_string(queue);
    const auto timeout = std::chrono::seconds(o.request_timeout_s);
    std::vector<std::int64_t> last_offset(o.partitions, 0);

    while (!control.stopping()) {
        const seq_block block = feed.next(o.push_batch, steady::now());
        if (block.count == 0) break;
        st.note_send(steady::now(), block.count);
        const std::string body = build_stream_push_body(o, queue_json, run_tag, feed.id(), block.first, block.count);
        http_result res;
        unsigned attempt = 0;
        for (;; ++attempt) {
            const auto t0 = steady::now();
            st.span.start(t0);
            res = co_await client.request(bhttp::verb::post, target, body, timeout);
            const auto t1 = steady::now();
            if (control.stopping()) co_return;
            if (res.ok()) {
                st.push.add(t1 - t0);
                st.span.end(t1);
                ++st.requests;
                st.bytes_sent += body.size();
                break;
            }
            ++st.failed_requests;
            if (!retryable(res)) {
                control.stop(stop_reason::fatal,
                             fmt::format("POST {} ({} items) answered {}", target, block.count, res.describe()));
                co_return;
            }
            control.report_error("push request failed, retrying", res.describe());
            ++st.retries;
            const auto pause = retry_backoff(res, attempt);
            co_await client.sleep(pause);
            if (control.stopping()) co_return;
        }
        read_push_answer(o, res, block.first, block.count, attempt, last_offset, control, st);
        control.add_pushed(block.count);
    }
}

// ---- the worker

namespace {

// Sends `body` until an answer not worth retrying; counts failed requests and resends.
asio::awaitable<http_result> post_until_answered(http_client& client, const std::string& url, const std::string& body,
                                                 std::chrono::milliseconds timeout, run_control& control,
                                                 stream_stats& st, const char* what, unsigned& attempts) {
    http_result res;
    for (attempts = 0;; ++attempts) {
        res = co_await client.request(bhttp::verb::post, url, body, timeout);
        if (control.stopping() || res.ok() || !retryable(res)) co_return res;
        ++st.failed_requests;
        ++st.retries;
        control.report_error(fmt::format("{} failed, retrying", what), res.describe());
        const auto pause = retry_backoff(res, attempts);
        co_await client.sleep(pause);
        if (control.stopping()) co_return res;
    }
}

struct cycle_answer {
    bool well_formed = false;
    bool success = false;
    std::string error;
    std::uint64_t queued = 0, duplicates = 0, other = 0;  // push_results by status
};

cycle_answer read_cycle_answer(const std::string& body) {
    thread_local simdjson::dom::parser parser;
    cycle_answer out;
    simdjson::dom::object answer;
    if (parser.parse(body).get_object().get(answer) != simdjson::SUCCESS ||
        answer["success"].get_bool().get(out.success) != simdjson::SUCCESS)
        return out;
    if (!out.success) {
        std::string_view error;
        if (answer["error"].get_string().get(error) != simdjson::SUCCESS) error = "(no error given)";
        out.error.assign(error);
        out.well_formed = true;
        return out;
    }
    simdjson::dom::array results;
    if (answer["push_results"].get_array().get(results) != simdjson::SUCCESS) return out;
    for (simdjson::dom::element r : results) {
        std::string_view status;
        if (r["status"].get_string().get(status) != simdjson::SUCCESS)
            ++out.other;
        else if (status == "queued")
            ++out.queued;
        else if (status == "duplicate")
            ++out.duplicates;
        else
            ++out.other;
    }
    out.well_formed = true;
    return out;
}

// One lane batch: the messages of one source partition in a pop answer (their positions).
struct lane_batch {
    std::string partition_id;
    std::vector<std::size_t> at;
};

void split_lanes(const std::vector<popped_message>& batch, std::vector<lane_batch>& lanes) {
    lanes.clear();
    for (std::size_t i = 0; i < batch.size(); ++i) {
        auto it = std::find_if(lanes.begin(), lanes.end(),
                               [&](const lane_batch& l) { return l.partition_id == batch[i].partition_id; });
        if (it == lanes.end()) it = lanes.insert(lanes.end(), lane_batch{batch[i].partition_id, {}});
        it->at.push_back(i);
    }
}

// The worker's fixed parts, passed to each lane.
struct worker_context {
    const options& o;
    const stream_setup& s;
    http_client& client;
    ledger& book;
    run_control& control;
    stream_stats& st;
    std::string state_url, cycle_url, release_url;
    std::chrono::milliseconds timeout;
    std::unordered_map<std::string, std::uint32_t> partition_ids;  // cache of book.intern_partition
};

// The cycle body of a lane batch whose last message is `last`.
std::string cycle_body(const worker_context& w, const lane_batch& lane, const lane_plan& plan,
                       const popped_message& last) {
    std::string body;
    body.reserve(plan.state_ops.size() + plan.push_items.size() + 512);
    auto out = std::back_inserter(body);
    fmt::format_to(out,
                   "{{\"query_id\":{},\"partition_id\":{},\"consumer_group\":{},\"state_ops\":{},\"push_items\":{},"
                   "\"ack\":{{\"transactionId\":{}",
                   json_string(w.s.query_id), json_string(lane.partition_id), json_string(w.s.group), plan.state_ops,
                   plan.push_items, json_string(last.transaction_id));
    if (!last.lease_id.empty()) fmt::format_to(out, ",\"leaseId\":{}", json_string(last.lease_id));
    fmt::format_to(out, ",\"status\":\"completed\",\"count\":{}}},\"release_lease\":true}}", lane.at.size());
    return body;
}

// A committed cycle: its messages go to the ledger (first commits settle), its counts to the stats.
void record_commit(worker_context& w, const std::vector<popped_message>& batch, const lane_batch& lane,
                   const lane_plan& plan, std::uint64_t ordinal) {
    auto& st = w.st;
    ++st.cycles;
    st.upserts += plan.upserts;
    st.deletes += plan.deletes;
    st.windows_emitted += plan.windows;
    st.counts_emitted += plan.counts;
    st.counted += plan.counted;
    st.committed += lane.at.size();
    const std::int64_t now_us = wall_us();
    std::uint64_t first_commits = 0;
    for (const std::size_t i : lane.at) {
        const auto& m = batch[i];
        if (!m.ours) {
            w.book.count_unexpected();
            continue;
        }
        auto cached = w.partition_ids.find(m.partition_id);
        if (cached == w.partition_ids.end())
            cached = w.partition_ids.emplace(m.partition_id, w.book.intern_partition(m.partition_id)).first;
        delivery d;
        d.pop_ordinal = ordinal;
        d.index = static_cast<std::uint32_t>(i);
        d.partition = cached->second;
        d.offset = m.offset;
        d.seq = m.seq;
        d.producer = m.producer;
        st.e2e.add_us(now_us - m.sent_us);
        if (w.book.mark_delivered(m.seq))
            ++first_commits;
        else if (m.seq >= w.book.expected())
            w.book.count_unexpected();
        st.deliveries.push_back(d);
    }
    const auto settled = steady::now();
    st.span.end(settled);
    if (first_commits == 0) return;
    const std::uint64_t total = w.book.add_completed(first_commits);
    const std::uint64_t expected = w.book.expected();
    if (total >= expected && total - first_commits < expected) {  // this cycle completed the run
        w.control.mark_consumed_all(settled);
        w.control.stop(stop_reason::done);
    }
}

// Releases the lease of a lane batch whose cycle failed (status retry: nothing committed).
asio::awaitable<void> release_lane(worker_context& w, const std::vector<popped_message>& batch,
                                   const lane_batch& lane) {
    std::vector<popped_message> first{batch[lane.at.front()]};
    const std::string body = release_body(w.s.group, first);
    unsigned attempts = 0;
    http_result res = co_await post_until_answered(w.client, w.release_url, body, w.timeout, w.control, w.st,
                                                   "lease release", attempts);
    if (w.control.stopping()) co_return;
    ++w.st.lease_releases;
    const ack_outcome checked = res.ok() ? check_ack_answer(res.body, 1) : ack_outcome{false, 1, 0, res.describe()};
    w.st.release_failures += checked.failures;
    if (checked.failures)
        w.control.report_error("lease release not successful (the lease will expire)", checked.first_failure);
}

// state/get, compute, cycle for one lane batch; false when the run must stop.
asio::awaitable<bool> run_lane(worker_context& w, const std::vector<popped_message>& batch, const lane_batch& lane,
                               std::uint64_t ordinal) {
    auto& st = w.st;
    ++st.lane_batches;
    std::vector<stream_event> events;
    events.reserve(lane.at.size());
    std::vector<std::string> keys;
    for (const std::size_t i : lane.at) {
        stream_event e;
        if (!read_stream_event(batch[i].data, e)) {
            ++st.malformed;
            w.control.report_error("popped a message that is not a stream event", batch[i].data.substr(0, 300));
            continue;
        }
        if (std::find(keys.begin(), keys.end(), e.key) == keys.end()) keys.push_back(e.key);
        events.push_back(std::move(e));
    }

    // ---- 1. the state of the keys the batch touches
    std::map<std::string, key_windows> state;
    if (!keys.empty()) {
        std::string body = "{\"query_id\":" + json_string(w.s.query_id) +
                           ",\"partition_id\":" + json_string(lane.partition_id) + ",\"keys\":[";
        for (std::size_t k = 0; k < keys.size(); ++k) body += (k ? "," : "") + json_string(keys[k]);
        body += "]}";
        unsigned attempts = 0;
        const auto g0 = steady::now();
        http_result res =
            co_await post_until_answered(w.client, w.state_url, body, w.timeout, w.control, st, "state/get", attempts);
        if (w.control.stopping()) co_return false;
        if (!res.ok()) {
            ++st.failed_requests;
            w.control.stop(stop_reason::fatal, fmt::format("POST {} answered {}", w.state_url, res.describe()));
            co_return false;
        }
        st.state_get.add(steady::now() - g0);
        ++st.state_gets;
        std::uint64_t rows = 0;
        if (!read_state_rows(res.body, state, rows)) {
            w.control.stop(stop_reason::fatal, fmt::format("POST {} answered an unexpected body: {}", w.state_url,
                                                           res.body.substr(0, 300)));
            co_return false;
        }
        st.state_rows_read += rows;
    }

    // ---- 2. the count, 3. one cycle
    const popped_message& last = batch[lane.at.back()];
    const lane_plan plan = plan_lane(w.o, w.s.sink, last.partition, state, events);
    const std::string body = cycle_body(w, lane, plan, last);
    unsigned attempts = 0;
    const auto c0 = steady::now();
    http_result res =
        co_await post_until_answered(w.client, w.cycle_url, body, w.timeout, w.control, st, "stream cycle", attempts);
    if (w.control.stopping()) co_return false;
    st.resent_cycles += attempts;
    if (!res.ok()) {
        ++st.failed_requests;
        w.control.stop(stop_reason::fatal, fmt::format("POST {} answered {}", w.cycle_url, res.describe()));
        co_return false;
    }
    st.cycle.add(steady::now() - c0);
    const cycle_answer answer = read_cycle_answer(res.body);
    if (!answer.well_formed) {
        w.control.stop(stop_reason::fatal,
                       fmt::format("POST {} answered an unexpected body: {}", w.cycle_url, res.body.substr(0, 300)));
        co_return false;
    }
    if (!answer.success) {
        ++st.failed_cycles;
        ++st.failures[answer.error];
        if (attempts > 0) ++st.lost_answers;  // the first attempt may have committed it
        w.control.report_error("stream cycle failed; popping the span again", answer.error);
        if (answer.error.find("Invalid or expired lease") == std::string::npos) co_await release_lane(w, batch, lane);
        co_return !w.control.stopping();
    }
    st.sink_queued += answer.queued;
    st.sink_other += answer.other;
    if (attempts == 0 && answer.duplicates) {
        st.sink_duplicates += answer.duplicates;
        w.control.report_error("a committed cycle's sink push answered duplicate",
                               fmt::format("{} in one cycle", answer.duplicates));
    }
    if (answer.other) w.control.report_error("sink push neither queued nor duplicate", res.body.substr(0, 300));
    record_commit(w, batch, lane, plan, ordinal);
    co_return true;
}

}  // namespace

asio::awaitable<void> run_stream_worker(const options& o, const stream_setup& s, http_client& client, ledger& book,
                                        run_control& control, stream_stats& st) {
    worker_context w{
        o,
        s,
        client,
        book,
        control,
        st,
        o.base_path + "/streams/v1/state/get",
        o.base_path + "/streams/v1/cycle",
        o.base_path + "/api/v1/ack/batch",
        std::chrono::seconds(o.request_timeout_s) + std::chrono::milliseconds(o.wait ? o.wait_timeout_ms : 0),
        {}};
    const std::string pop_url = pop_target(o, s.source, s.group, false);
    std::vector<popped_message> batch;
    std::vector<lane_batch> lanes;
    unsigned attempt = 0;
    while (!control.stopping() && book.completed() < book.expected()) {
        std::int64_t received_us = 0;
        const pop_step step =
            co_await pop_once(o, client, pop_url, w.timeout, control, st, attempt, "stream pop", batch, received_us);
        if (step == pop_step::stop) break;
        if (step != pop_step::messages || batch.empty()) continue;
        st.messages += batch.size();
        const std::uint64_t ordinal = book.next_pop_ordinal();
        split_lanes(batch, lanes);
        for (const auto& lane : lanes) {
            const bool go_on = co_await run_lane(w, batch, lane, ordinal);
            if (!go_on) co_return;
        }
    }
}

}  // namespace queen::bench
