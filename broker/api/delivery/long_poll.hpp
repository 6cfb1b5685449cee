#pragma once
// A pop's long-poll (`wait=true`, docs/http-api.md): it holds one of its client address's
// parking slots for its whole life and, once parked, sleeps between claims until a push or
// a notification wakes its queue, the re-check interval passes, the deadline comes or the
// client leaves. No database connection is held while it sleeps.
#include "api/shared/broker_context.hpp"
#include "http/per_client_slots.hpp"
#include "http/types.hpp"

#include <utility>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace queen::api {

class long_poll {
public:
    using clock = std::chrono::steady_clock;

    // Takes a parking slot of the client's address and one of its tenant; 429 (api_error) when
    // either has none left.
    long_poll(broker_context& ctx, http::request_context& rc, std::string queue, clock::time_point deadline);
    // Stops listening for wake-ups and for the client.
    ~long_poll();
    long_poll(const long_poll&) = delete;
    long_poll& operator=(const long_poll&) = delete;

    // Starts listening for wake-ups of the queue and for the client leaving.
    void park();
    // Forgets wake-ups that came before: call before each claim, so one that comes during it
    // is not lost.
    void before_claim();
    // After a claim that found nothing: waits for a wake-up (or the re-check, or the
    // deadline). False when the poll is over: the deadline passed or the client left.
    boost::asio::awaitable<bool> wait_for_more();
    // The poll answers now: its parked time leaves the request's latency, and the wait is
    // recorded.
    void finish();

private:
    struct wake_state;

    broker_context& ctx_;
    http::request_context& rc_;
    std::string queue_;
    clock::time_point deadline_;
    http::per_client_slots::slot slot_;         // held until the poll answers
    http::per_client_slots::slot tenant_slot_;  // the tenant's, as long
    std::shared_ptr<wake_state> state_;
    std::uint64_t waiter_ = 0;
    clock::time_point parked_since_{};
    clock::duration parked_{};
};

}  // namespace queen::api
