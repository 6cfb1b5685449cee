#include "producer.hpp"

#include "send_schedule.hpp"

#include <boost/beast/http/verb.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iterator>
#include <optional>
#include <vector>

namespace queen::bench {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;

namespace {

// Builds {"items":[…]} for seqs [first, first + n).
std::string build_push_body(const options& o, const std::string& queue_json, const std::string& run_tag,
                            std::uint32_t producer, std::uint64_t first, std::uint64_t n) {
    std::string body;
    body.reserve(n * (o.payload_bytes + queue_json.size() + 96) + 16);
    auto out = std::back_inserter(body);
    body += "{\"items\":[";
    const std::int64_t sent = wall_us();
    for (std::uint64_t seq = first; seq < first + n; ++seq) {
        if (seq != first) body += ',';
        fmt::format_to(out, "{{\"queue\":{},\"partition\":\"p{}\",\"transactionId\":\"{}-{}\",\"payload\":", queue_json,
                       seq % o.partitions, run_tag, seq);
        const auto payload_start = body.size();
        fmt::format_to(out, "{{\"producer\":{},\"seq\":{},\"sentUs\":{},\"pad\":\"", producer, seq, sent);
        const std::size_t so_far = body.size() - payload_start + 2;  // + closing "}
        if (o.payload_bytes > so_far) body.append(o.payload_bytes - so_far, 'x');
        body += "\"}}";
    }
    body += "]}";
    return body;
}

std::chrono::milliseconds backoff(const http_result& r, unsigned attempt) {
    if (!r.retry_after.empty()) {
        unsigned s = 0;
        for (char c : r.retry_after) {
            if (c < '0' || c > '9') break;
            s = s * 10 + static_cast<unsigned>(c - '0');
            if (s > 5) break;
        }
        return std::chrono::milliseconds(std::clamp(s, 1u, 5u) * 1000);
    }
    return std::chrono::milliseconds(50u << std::min(attempt, 5u));
}

bool retryable(const http_result& r) { return r.ec || r.status >= 500 || r.status == 429; }

}  // namespace

asio::awaitable<void> run_producer(const options& o, producer_feed feed, std::string queue, std::string run_tag,
                                   steady::time_point start, http_client& client, run_control& control,
                                   producer_stats& st) {
    const std::string target = o.base_path + "/api/v1/push";
    const std::string queue_json = nlohmann::json(queue).dump();
    const auto timeout = std::chrono::seconds(o.request_timeout_s);
    std::vector<std::int64_t> last_offset(o.partitions, 0);  // per partition, this producer's last offset

    std::optional<send_schedule> schedule;
    if (o.rate > 0) {
        const auto interval = batch_interval(o.rate, o.push_batch, o.producers);
        schedule.emplace(start + interval * static_cast<std::int64_t>(feed.id()) / static_cast<std::int64_t>(o.producers),
                         interval);
    }

    while (!control.stopping()) {
        const seq_block block = feed.next(o.push_batch, steady::now());
        if (block.count == 0) break;
        const std::uint64_t next = block.first, n = block.count;
        if (schedule) {
            const auto due = schedule->due(steady::now());
            st.slips = schedule->slips();
            st.slipped_seconds = std::chrono::duration<double>(schedule->slipped()).count();
            co_await client.sleep_until(due);
            if (control.stopping()) break;
        }
        const auto sent_at = steady::now();
        if (schedule) st.send_lateness.add(schedule->sent(sent_at));
        st.note_send(sent_at, n);
        const std::string body = build_push_body(o, queue_json, run_tag, feed.id(), next, n);
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
                             fmt::format("POST {} ({} items) answered {}", target, n, res.describe()));
                co_return;
            }
            control.report_error("push request failed, retrying", res.describe());
            ++st.retries;
            co_await client.sleep(backoff(res, attempt));
            if (control.stopping()) co_return;
        }

        auto answer = nlohmann::json::parse(res.body, nullptr, false);
        if (answer.is_discarded() || !answer.is_array()) {
            st.bad_answers += n;
            control.report_error("push answer is not a JSON array", res.describe());
        } else {
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
                    const auto partition = (next + i) % o.partitions;
                    const auto offset = a.value("offset", std::int64_t(0));
                    if (offset <= last_offset[partition]) ++st.offset_regressions;
                    last_offset[partition] = std::max(last_offset[partition], offset);
                } else if (status == "buffered") {
                    ++st.buffered;
                } else if (status == "duplicate") {
                    if (attempt > 0) ++st.duplicate_after_retry;
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
        control.add_pushed(n);
    }
}

}  // namespace queen::bench
