#include "api/delivery/long_poll.hpp"

#include "api/shared/api_error.hpp"
#include "metrics/prometheus_metrics.hpp"
#include "services/pop_waiters.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <string_view>

namespace queen::api {

namespace asio = boost::asio;

// Shared by the poll and the callbacks that wake it (all run on the connection's strand).
struct long_poll::wake_state {
    explicit wake_state(const asio::any_io_executor& ex) : timer(ex) {}
    asio::steady_timer timer;
    bool signaled = false;
    services::wake_reason reason = services::wake_reason::push;  // of the last signal
    bool client_gone = false;
};

namespace {

// A parking slot of `key` in `slots`, or 429 naming whose limit it is (`whose`: "from this
// address", "for this tenant").
http::per_client_slots::slot take_slot(http::per_client_slots& slots, const std::string& key, std::string_view whose) {
    auto slot = slots.try_take(key);
    if (!slot)
        throw api_error(error_code::too_many_requests,
                        "too many parked long-polls " + std::string(whose) + " (the limit is " +
                            std::to_string(slots.limit()) + ")",
                        1);
    return std::move(*slot);
}

// The queen_longpoll_wakeups_total reason of one wait that ended.
std::string_view wake_label(bool signaled, services::wake_reason reason, bool client_gone, bool past_deadline) {
    if (client_gone) return "disconnect";
    if (signaled) {
        switch (reason) {
            case services::wake_reason::push:
                return "push";
            case services::wake_reason::notify:
                return "notify";
            case services::wake_reason::recheck:
                return "recheck";
        }
    }
    return past_deadline ? "timeout" : "recheck";
}

}  // namespace

long_poll::long_poll(broker_context& ctx, http::request_context& rc, std::string queue, clock::time_point deadline)
    : ctx_(ctx),
      rc_(rc),
      queue_(std::move(queue)),
      deadline_(deadline),
      slot_(take_slot(ctx.longpoll_slots, rc.client.address(), "from this address")),
      // With tenancy off (or no QUEEN_TENANT_MAX_LONGPOLLS) a slot that counts nothing.
      tenant_slot_(take_slot(ctx.tenant_longpoll_slots, rc.tenant.tenant(), "for this tenant")),
      state_(std::make_shared<wake_state>(rc.executor)) {}

long_poll::~long_poll() {
    if (!waiter_) return;
    ctx_.waiters.remove(queue_, waiter_);
    rc_.client.stop_watching();
}

void long_poll::park() {
    auto state = state_;
    auto executor = rc_.executor;
    waiter_ = ctx_.waiters.add(queue_, [state, executor](services::wake_reason reason) {
        asio::post(executor, [state, reason] {
            state->signaled = true;
            state->reason = reason;
            state->timer.cancel();
        });
    });
    rc_.client.notify_when_gone([state] {
        state->client_gone = true;
        state->timer.cancel();
    });
    parked_since_ = clock::now();
}

void long_poll::before_claim() {
    state_->signaled = false;
}

asio::awaitable<bool> long_poll::wait_for_more() {
    if (state_->client_gone || clock::now() >= deadline_) co_return false;
    const auto wait_started = clock::now();
    if (!state_->signaled) {
        state_->timer.expires_at(std::min(deadline_, clock::now() + ctx_.config.longpoll_recheck));
        boost::system::error_code ec;
        co_await state_->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    parked_ += clock::now() - wait_started;
    ctx_.prometheus.longpoll_woken(
        wake_label(state_->signaled, state_->reason, state_->client_gone, clock::now() >= deadline_));
    co_return !state_->client_gone;
}

void long_poll::finish() {
    rc_.parked = parked_;
    ctx_.prometheus.longpoll_waited(std::chrono::duration<double>(clock::now() - parked_since_).count());
}

}  // namespace queen::api
