#pragma once
// One pop of a consumer or pipeline worker with its bookkeeping, shared by both loops.
#include "http_client.hpp"
#include "options.hpp"
#include "pop_answer.hpp"
#include "retry_policy.hpp"
#include "run_control.hpp"
#include "stats.hpp"

#include <utility>
#include <boost/asio/awaitable.hpp>
#include <boost/beast/http/verb.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace queen::bench {

enum class pop_step {
    messages,  // `batch` holds the popped messages, `received_us` when the answer arrived
    empty,     // 204 (after the idle pause unless long-polling)
    retry,     // a retryable failure (after its back-off)
    stop,      // the run is stopping: a fatal answer, an unexpected body, or stop requested
};

// Sends one pop to pop_url and counts it in `st` (span, pops or empty pops and their latency,
// failed requests, retries, bytes). `attempt` is the caller's retry counter (reset on an
// answer); `what` names the pop in error reports.
template <class Stats>
boost::asio::awaitable<pop_step> pop_once(const options& o, http_client& client, const std::string& pop_url,
                                          std::chrono::milliseconds timeout, run_control& control,
                                          Stats& st, unsigned& attempt, const char* what,
                                          std::vector<popped_message>& batch, std::int64_t& received_us) {
    const std::string no_body;
    const auto t0 = steady::now();
    st.span.start(t0);
    http_result res = co_await client.request(boost::beast::http::verb::get, pop_url, no_body, timeout);
    const auto t1 = steady::now();
    if (control.stopping()) co_return pop_step::stop;
    if (!res.ok()) {
        ++st.failed_requests;
        if (!retryable(res)) {
            control.stop(stop_reason::fatal, fmt::format("GET {} answered {}", pop_url, res.describe()));
            co_return pop_step::stop;
        }
        control.report_error(fmt::format("{} failed, retrying", what), res.describe());
        ++st.retries;
        const auto pause = retry_backoff(res, attempt++);
        co_await client.sleep(pause);
        co_return pop_step::retry;
    }
    attempt = 0;
    if (res.status == 204) {
        ++st.empty_pops;
        st.pop_empty.add(t1 - t0);
        const auto pause = std::chrono::milliseconds(o.idle_sleep_ms);
        if (!o.wait) co_await client.sleep(pause);
        co_return pop_step::empty;
    }
    received_us = wall_us();
    st.pop.add(t1 - t0);
    ++st.pops;
    st.bytes_received += res.body.size();
    if (!parse_pop_answer(res.body, batch)) {
        control.stop(stop_reason::fatal, fmt::format("GET {} answered {} with an unexpected body: {}", pop_url,
                                                     res.status, res.body.substr(0, 300)));
        co_return pop_step::stop;
    }
    co_return pop_step::messages;
}

}  // namespace queen::bench
