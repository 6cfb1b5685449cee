#include "consumer.hpp"

#include "ack_request.hpp"
#include "pop_answer.hpp"
#include "pop_step.hpp"
#include "retry_policy.hpp"

#include <boost/beast/http/verb.hpp>
#include <fmt/format.h>

#include <unordered_map>

namespace queen::bench {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;

std::string pop_target(const options& o, const std::string& queue, const std::string& group, bool auto_ack) {
    std::string t = o.base_path + "/api/v1/pop/queue/" + url_encode(queue) + "?batch=" + std::to_string(o.pop_batch);
    if (o.wait) t += "&wait=true&timeout=" + std::to_string(o.wait_timeout_ms);
    if (!group.empty()) t += "&consumerGroup=" + url_encode(group);
    if (o.groups > 0) t += "&subscriptionMode=all";
    if (auto_ack) t += "&autoAck=true";
    if (o.pop_partitions > 1) t += "&partitions=" + std::to_string(o.pop_partitions);
    return t;
}

namespace {

// Records the batch's deliveries in the ledger; returns how many were first deliveries.
std::uint64_t record_deliveries(const std::vector<popped_message>& batch, std::int64_t received_us, ledger& book,
                                std::unordered_map<std::string, std::uint32_t>& partition_ids, run_control& control,
                                consumer_stats& st) {
    const std::uint64_t ordinal = book.next_pop_ordinal();
    std::uint64_t first_deliveries = 0;
    std::uint32_t index = 0;
    for (const auto& p : batch) {
        ++st.messages;
        delivery d;
        d.pop_ordinal = ordinal;
        d.index = index++;
        auto cached = partition_ids.find(p.partition_id);
        if (cached == partition_ids.end())
            cached = partition_ids.emplace(p.partition_id, book.intern_partition(p.partition_id)).first;
        d.partition = cached->second;
        d.offset = p.offset;
        if (!p.ours) {
            ++st.malformed;
            book.count_unexpected();
            control.report_error("popped a message that is not a bench payload", p.data.substr(0, 300));
            continue;
        }
        d.seq = p.seq;
        d.producer = p.producer;
        st.e2e.add_us(received_us - p.sent_us);
        if (book.mark_delivered(d.seq)) ++first_deliveries;
        else if (d.seq >= book.expected()) book.count_unexpected();
        st.deliveries.push_back(d);
    }
    return first_deliveries;
}

}  // namespace

asio::awaitable<void> run_consumer(const options& o, consumer_role role, http_client& client, stream_set& streams,
                                   run_control& control, consumer_stats& st) {
    ledger& book = streams.at(role.stream);
    const std::string pop_url = pop_target(o, role.queue, role.group, o.auto_ack);
    const std::string ack_url = o.base_path + "/api/v1/ack/batch";
    const auto timeout =
        std::chrono::seconds(o.request_timeout_s) + std::chrono::milliseconds(o.wait ? o.wait_timeout_ms : 0);
    std::unordered_map<std::string, std::uint32_t> partition_ids;  // cache of book.intern_partition
    std::vector<popped_message> batch;
    unsigned attempt = 0;

    while (!control.stopping() && book.completed() < book.expected()) {
        // ---- pop
        std::int64_t received_us = 0;
        const pop_step step =
            co_await pop_once(o, client, pop_url, timeout, control, st, attempt, "pop request", batch, received_us);
        if (step == pop_step::stop) break;
        if (step != pop_step::messages) continue;
        const std::uint64_t first_deliveries = record_deliveries(batch, received_us, book, partition_ids, control, st);

        // ---- ack
        if (!o.auto_ack && !batch.empty()) {
            const std::string body = ack_batch_body(role.group, batch, "completed");
            http_result ack;
            for (unsigned ack_attempt = 0;; ++ack_attempt) {
                const auto a0 = steady::now();
                ack = co_await client.request(bhttp::verb::post, ack_url, body, timeout);
                const auto a1 = steady::now();
                if (control.stopping()) co_return;
                if (ack.ok()) {
                    st.ack.add(a1 - a0);
                    ++st.ack_requests;
                    break;
                }
                ++st.failed_requests;
                if (!retryable(ack)) {
                    control.stop(stop_reason::fatal,
                                 fmt::format("POST {} ({} acks) answered {}", ack_url, batch.size(), ack.describe()));
                    co_return;
                }
                control.report_error("ack request failed, retrying", ack.describe());
                ++st.retries;
                const auto pause = retry_backoff(ack, ack_attempt);
                co_await client.sleep(pause);
                if (control.stopping()) co_return;
            }
            const ack_outcome checked = check_ack_answer(ack.body, batch.size());
            st.ack_failures += checked.failures;
            st.ack_noops += checked.noops;
            if (!checked.well_formed)
                control.report_error("ack answer is not an array of one answer per ack", ack.describe());
            else if (checked.failures)
                control.report_error("ack not successful",
                                     fmt::format("{} of {}: {}", checked.failures, batch.size(), checked.first_failure));
        }

        const auto settled = steady::now();
        st.span.end(settled);
        if (streams.settle(role.stream, first_deliveries)) {
            control.mark_consumed_all(settled);
            control.stop(stop_reason::done);
        }
    }
}

}  // namespace queen::bench
