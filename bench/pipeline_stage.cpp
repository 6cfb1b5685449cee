#include "pipeline_stage.hpp"

#include "ack_request.hpp"
#include "consumer.hpp"
#include "forward_transaction.hpp"
#include "pop_answer.hpp"
#include "pop_step.hpp"
#include "retry_policy.hpp"
#include "roles.hpp"

#include <boost/beast/http/verb.hpp>
#include <fmt/format.h>

namespace queen::bench {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;

std::uint64_t stage_progress::total() const {
    std::uint64_t n = 0;
    for (std::size_t k = 0; k < stages_; ++k) n += forwarded_[k].load();
    return n;
}

namespace {

// Sends `body` to `url` until an answer that is not worth retrying; counts failures and retries. Never throws.
asio::awaitable<http_result> post_with_retries(http_client& client, const std::string& url, const std::string& body,
                                               std::chrono::milliseconds timeout, run_control& control,
                                               stage_stats& st, const char* what, unsigned& attempts) {
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

// Releases the leases of a batch whose transaction was rolled back (status retry: nothing committed).
asio::awaitable<void> release_leases(const options& o, http_client& client, const std::vector<popped_message>& batch,
                                     std::chrono::milliseconds timeout, run_control& control, stage_stats& st) {
    const std::string url = o.base_path + "/api/v1/ack/batch";
    const std::string body = release_body(std::string(), batch);
    const std::size_t acks = distinct_partitions(batch);
    unsigned attempts = 0;
    const auto t0 = steady::now();
    http_result res = co_await post_with_retries(client, url, body, timeout, control, st, "lease release", attempts);
    if (control.stopping()) co_return;
    st.release.add(steady::now() - t0);
    ++st.lease_releases;
    if (!res.ok()) {
        ++st.failed_requests;
        st.release_failures += acks;
        control.report_error("lease release failed (the lease will expire)", res.describe());
        co_return;
    }
    const ack_outcome checked = check_ack_answer(res.body, acks);
    st.release_failures += checked.failures;
    if (checked.failures)
        control.report_error("lease release not successful (the lease will expire)", checked.first_failure);
}

}  // namespace

asio::awaitable<void> run_stage_worker(const options& o, std::size_t stage, http_client& client,
                                       stage_progress& progress, run_control& control, stage_stats& st) {
    const std::string pop_url = pop_target(o, stage_queue(o, stage), std::string(), false);
    const std::string tx_url = o.base_path + "/api/v1/transaction";
    const std::string next_queue = stage_queue(o, stage + 1);
    const auto timeout =
        std::chrono::seconds(o.request_timeout_s) + std::chrono::milliseconds(o.wait ? o.wait_timeout_ms : 0);
    std::vector<popped_message> batch;
    std::uint64_t sent_transactions = 0;
    unsigned attempt = 0;

    while (!control.stopping() && progress.forwarded(stage) < o.messages) {
        // ---- pop
        std::int64_t received_us = 0;
        const pop_step step =
            co_await pop_once(o, client, pop_url, timeout, control, st, attempt, "stage pop", batch, received_us);
        if (step == pop_step::stop) break;
        if (step != pop_step::messages) continue;
        if (batch.empty()) continue;
        st.messages += batch.size();
        for (const auto& m : batch)
            if (!m.ours) {
                ++st.malformed;
                control.report_error("stage popped a message that is not a bench payload", m.data.substr(0, 300));
            }

        // ---- forward and ack, atomically
        const bool poison = o.inject_tx_failures > 0 && ++sent_transactions % o.inject_tx_failures == 0;
        const std::string body = forward_body(batch, stage, next_queue, poison);
        unsigned attempts = 0;
        const auto f0 = steady::now();
        http_result tx = co_await post_with_retries(client, tx_url, body, timeout, control, st, "forward transaction",
                                                    attempts);
        const auto f1 = steady::now();
        if (control.stopping()) break;
        if (!tx.ok()) {
            ++st.failed_requests;
            control.stop(stop_reason::fatal,
                         fmt::format("POST {} ({} messages) answered {}", tx_url, batch.size(), tx.describe()));
            break;
        }
        st.transaction.add(f1 - f0);
        const forward_outcome out = check_forward_answer(tx.body);
        if (!out.well_formed) {
            control.stop(stop_reason::fatal,
                         fmt::format("POST {} answered with an unexpected body: {}", tx_url, tx.body.substr(0, 300)));
            break;
        }
        if (!out.success) {
            ++st.failed_transactions;
            if (poison) ++st.injected_failures;
            else control.report_error("forward transaction rolled back; popping the span again", out.error);
            co_await release_leases(o, client, batch, timeout, control, st);
            continue;
        }
        ++st.transactions;
        // After a resent request, "duplicate" means the lost attempt had committed them.
        const std::uint64_t moved = out.queued + (attempts > 0 ? out.duplicates : 0);
        if (attempts == 0 && out.duplicates) {
            st.forward_duplicates += out.duplicates;
            control.report_error("forwarded message answered duplicate", fmt::format("{} in one transaction", out.duplicates));
        }
        if (out.other) {
            st.forward_other += out.other;
            control.report_error("forwarded message neither queued nor duplicate", tx.body.substr(0, 300));
        }
        st.forwarded += moved;
        progress.add(stage, moved);
        st.span.end(f1);
    }
}

}  // namespace queen::bench
