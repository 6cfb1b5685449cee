#include "services/pop_fusion.hpp"

#include "log/log.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace queen::services {

namespace asio = boost::asio;

pop_fusion::pop_fusion(asio::any_io_executor executor, db::pg_pool& pool, pop_fusion_options options)
    : executor_(std::move(executor)), pool_(pool), options_(options) {}

std::string pop_fusion::lane_key(const store::pop_claim& c) {
    // Length-prefixed names: no two different (queue, group) pairs give the same key.
    std::string key = std::to_string(c.queue.size()) + ':' + c.queue + std::to_string(c.consumer_group.size()) + ':' +
                      c.consumer_group;
    key += c.auto_ack ? 'A' : 'L';
    key += c.subscribe_all ? 'B' : 'N';
    if (c.subscription_at_us) key += std::to_string(*c.subscription_at_us);
    return key;
}

asio::awaitable<store::claimed_spans> pop_fusion::claim(store::pop_claim claim) {
    if (claim.partition || options_.max_requests <= 1) co_return co_await store::claim_spans(pool_, claim);
    auto request = std::make_shared<pending_request>(pending_request{std::move(claim), {}});
    // A named function, not a lambda inside the co_await (GCC 12, see push_fusion).
    std::function<void(util::completer<store::claimed_spans>)> enqueue =
        [this, request](util::completer<store::claimed_spans> done) {
            const std::string key = lane_key(request->claim);
            bool start = false;
            {
                std::lock_guard lock(mutex_);
                auto& l = lanes_[key];
                request->done = std::move(done);
                l.pending.push_back(std::move(*request));
                start = !l.running;
                l.running = true;
            }
            if (start) asio::co_spawn(executor_, run_lane(key), asio::detached);
        };
    auto claimed = co_await util::await_completion<store::claimed_spans>(std::move(enqueue));
    co_return claimed;
}

asio::awaitable<void> pop_fusion::run_lane(std::string key) {
    if (options_.wait.count() > 0) {
        asio::steady_timer timer(executor_, options_.wait);
        boost::system::error_code ec;
        co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    // Pops that arrived while a call ran have waited already: the next call starts at once.
    for (;;) {
        std::vector<pending_request> batch;
        {
            std::lock_guard lock(mutex_);
            auto it = lanes_.find(key);
            auto& pending = it->second.pending;
            if (pending.empty()) {
                lanes_.erase(it);
                co_return;
            }
            const auto n = std::min(pending.size(), options_.max_requests);
            batch.assign(std::make_move_iterator(pending.begin()), std::make_move_iterator(pending.begin() + n));
            pending.erase(pending.begin(), pending.begin() + n);
        }
        co_await flush(std::move(batch));
    }
}

asio::awaitable<void> pop_fusion::claim_alone(std::shared_ptr<pending_request> r) {
    try {
        auto claimed = co_await store::claim_spans(pool_, r->claim);
        r->done(nullptr, std::move(claimed));
    } catch (...) {
        r->done(std::current_exception(), {});
    }
}

asio::awaitable<void> pop_fusion::flush(std::vector<pending_request> batch) {
    if (options_.on_call) options_.on_call(batch.size());
    if (batch.size() == 1) {
        co_await claim_alone(std::make_shared<pending_request>(std::move(batch[0])));
        co_return;
    }
    std::vector<store::fused_pop> requests;
    requests.reserve(batch.size());
    for (const auto& r : batch) requests.push_back({r.claim.batch, r.claim.partitions});
    std::vector<store::claimed_spans> answers;
    try {
        answers = co_await store::claim_spans_fused(pool_, batch[0].claim, requests);
    } catch (const db::pg_error& e) {
        // A lost connection may have committed leases: they expire like any unanswered pop's.
        if (e.kind() == db::pg_error_kind::connection_lost) {
            for (auto& r : batch) r.done(std::current_exception(), {});
            co_return;
        }
        log::debug("fused pop of {} requests failed ({}); claiming them one by one", batch.size(), e.what());
    } catch (const std::exception& e) {
        log::warn("fused pop of {} requests failed; claiming them one by one: {}", batch.size(), e.what());
    }
    if (answers.size() == batch.size()) {
        for (std::size_t i = 0; i < batch.size(); ++i) batch[i].done(nullptr, std::move(answers[i]));
        co_return;
    }
    // The fused call failed before committing: each request on its own, one after another,
    // so one that fails for its own reason fails alone.
    for (auto& r : batch) co_await claim_alone(std::make_shared<pending_request>(std::move(r)));
}

}  // namespace queen::services
