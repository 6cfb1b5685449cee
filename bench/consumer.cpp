#include "consumer.hpp"

#include <boost/beast/http/verb.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <unordered_map>

namespace queen::bench {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;
using nlohmann::json;

namespace {

std::string pop_target(const options& o) {
    std::string t = o.base_path + "/api/v1/pop/queue/" + url_encode(o.queue) + "?batch=" + std::to_string(o.pop_batch);
    if (o.wait) t += "&wait=true&timeout=" + std::to_string(o.wait_timeout_ms);
    if (!o.consumer_group.empty()) t += "&consumerGroup=" + url_encode(o.consumer_group);
    if (o.auto_ack) t += "&autoAck=true";
    if (o.pop_partitions > 1) t += "&partitions=" + std::to_string(o.pop_partitions);
    return t;
}

std::chrono::milliseconds backoff(const http_result& r, unsigned attempt) {
    if (!r.retry_after.empty()) return std::chrono::seconds(1);
    return std::chrono::milliseconds(50u << std::min(attempt, 5u));
}

bool retryable(const http_result& r) { return r.ec || r.status >= 500 || r.status == 429; }

struct popped {
    std::string transaction_id;
    std::string partition_id;
    std::string lease_id;
};

}  // namespace

asio::awaitable<void> run_consumer(const options& o, http_client& client, ledger& book, run_control& control,
                                   consumer_stats& st) {
    const std::string pop_url = pop_target(o);
    const std::string ack_url = o.base_path + "/api/v1/ack/batch";
    const std::string group_json = o.consumer_group.empty() ? std::string() : json(o.consumer_group).dump();
    const auto timeout =
        std::chrono::seconds(o.request_timeout_s) + std::chrono::milliseconds(o.wait ? o.wait_timeout_ms : 0);
    const std::string no_body;
    std::unordered_map<std::string, std::uint32_t> partition_ids;  // cache of book.intern_partition
    std::vector<popped> batch;
    unsigned attempt = 0;

    while (!control.stopping() && book.completed() < book.expected()) {
        // ---- pop
        const auto t0 = steady::now();
        st.span.start(t0);
        http_result res = co_await client.request(bhttp::verb::get, pop_url, no_body, timeout);
        const auto t1 = steady::now();
        if (control.stopping()) break;
        if (!res.ok()) {
            ++st.failed_requests;
            if (!retryable(res)) {
                control.stop(stop_reason::fatal, fmt::format("GET {} answered {}", pop_url, res.describe()));
                break;
            }
            control.report_error("pop request failed, retrying", res.describe());
            ++st.retries;
            co_await client.sleep(backoff(res, attempt++));
            continue;
        }
        attempt = 0;
        if (res.status == 204) {
            ++st.empty_pops;
            st.pop_empty.add(t1 - t0);
            if (!o.wait) co_await client.sleep(std::chrono::milliseconds(o.idle_sleep_ms));
            continue;
        }
        const std::uint64_t ordinal = book.next_pop_ordinal();
        const std::int64_t received_us = wall_us();
        st.pop.add(t1 - t0);
        ++st.pops;
        st.bytes_received += res.body.size();

        auto answer = json::parse(res.body, nullptr, false);
        if (answer.is_discarded() || !answer.is_object() || !answer.contains("messages") ||
            !answer["messages"].is_array()) {
            control.stop(stop_reason::fatal,
                         fmt::format("GET {} answered {} with an unexpected body: {}", pop_url, res.status,
                                     res.body.substr(0, 300)));
            break;
        }
        const std::string top_lease =
            answer.contains("leaseId") && answer["leaseId"].is_string() ? answer["leaseId"].get<std::string>() : "";
        batch.clear();
        std::uint64_t first_deliveries = 0;
        std::uint32_t index = 0;
        for (const auto& m : answer["messages"]) {
            ++st.messages;
            popped p;
            if (m.contains("transactionId") && m["transactionId"].is_string())
                p.transaction_id = m["transactionId"].get<std::string>();
            if (m.contains("partitionId") && m["partitionId"].is_string())
                p.partition_id = m["partitionId"].get<std::string>();
            p.lease_id = m.contains("leaseId") && m["leaseId"].is_string() ? m["leaseId"].get<std::string>() : top_lease;

            delivery d;
            d.pop_ordinal = ordinal;
            d.index = index++;
            auto cached = partition_ids.find(p.partition_id);
            if (cached == partition_ids.end())
                cached = partition_ids.emplace(p.partition_id, book.intern_partition(p.partition_id)).first;
            d.partition = cached->second;
            d.offset = m.value("offset", std::int64_t(-1));
            const auto it = m.find("data");
            const bool ours = it != m.end() && it->is_object() && it->contains("seq") && (*it)["seq"].is_number_unsigned() &&
                              it->contains("producer") && (*it)["producer"].is_number_unsigned() &&
                              it->contains("sentUs") && (*it)["sentUs"].is_number_integer();
            if (!ours) {
                ++st.malformed;
                book.count_unexpected();
                control.report_error("popped a message that is not a bench payload", m.dump().substr(0, 300));
            } else {
                d.seq = (*it)["seq"].get<std::uint64_t>();
                d.producer = (*it)["producer"].get<std::uint32_t>();
                st.e2e.add_us(received_us - (*it)["sentUs"].get<std::int64_t>());
                if (book.mark_delivered(d.seq)) ++first_deliveries;
                else if (d.seq >= book.expected()) book.count_unexpected();
                st.deliveries.push_back(d);
            }
            batch.push_back(std::move(p));
        }

        // ---- ack
        if (!o.auto_ack && !batch.empty()) {
            std::string body = "{";
            if (!group_json.empty()) body += "\"consumerGroup\":" + group_json + ",";
            body += "\"acknowledgments\":[";
            for (std::size_t i = 0; i < batch.size(); ++i) {
                if (i) body += ',';
                body += "{\"transactionId\":" + json(batch[i].transaction_id).dump() +
                        ",\"partitionId\":" + json(batch[i].partition_id).dump() +
                        ",\"leaseId\":" + json(batch[i].lease_id).dump() + ",\"status\":\"completed\"}";
            }
            body += "]}";
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
                co_await client.sleep(backoff(ack, ack_attempt));
                if (control.stopping()) co_return;
            }
            auto answers = json::parse(ack.body, nullptr, false);
            if (answers.is_discarded() || !answers.is_array() || answers.size() != batch.size()) {
                st.ack_failures += batch.size();
                control.report_error("ack answer is not an array of one answer per ack", ack.describe());
            } else {
                for (const auto& a : answers) {
                    const bool ok = a.is_object() && a.value("success", false);
                    if (!ok) {
                        ++st.ack_failures;
                        control.report_error("ack not successful", a.dump());
                    } else if (a.value("noop", false)) {
                        ++st.ack_noops;
                    }
                }
            }
        }

        const auto settled = steady::now();
        st.span.end(settled);
        if (book.add_completed(first_deliveries) >= book.expected()) {
            control.mark_consumed_all(settled);
            control.stop(stop_reason::done);
        }
    }
}

}  // namespace queen::bench
