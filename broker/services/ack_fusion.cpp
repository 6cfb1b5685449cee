#include "services/ack_fusion.hpp"

#include "log/log.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <memory>
#include <unordered_set>

namespace queen::services {

namespace asio = boost::asio;

ack_fusion::ack_fusion(asio::any_io_executor executor, db::pg_pool& pool, ack_fusion_options options)
    : executor_(std::move(executor)), pool_(pool), options_(std::move(options)) {}

asio::awaitable<std::vector<store::ack_outcome>> ack_fusion::apply(std::string group,
                                                                   std::vector<store::ack_request> acks,
                                                                   std::optional<std::string> scope) {
    if (acks.empty()) co_return std::vector<store::ack_outcome>{};
    if (options_.wait.count() == 0) co_return co_await store::apply_acks(pool_, group, acks, scope);
    // Through a shared_ptr: the registration callback is a copyable function.
    auto request =
        std::make_shared<pending_request>(pending_request{std::move(group), std::move(scope), std::move(acks), {}});
    // A named function, not a lambda inside the co_await (GCC 12, see push_fusion).
    std::function<void(util::completer<std::vector<store::ack_outcome>>)> enqueue =
        [this, request](util::completer<std::vector<store::ack_outcome>> done) {
            bool start = false;
            {
                std::lock_guard lock(mutex_);
                request->done = std::move(done);
                pending_.push_back(std::move(*request));
                maybe_schedule_locked(start);
            }
            if (start) asio::co_spawn(executor_, flush_after_wait(), asio::detached);
        };
    auto outcomes = co_await util::await_completion<std::vector<store::ack_outcome>>(std::move(enqueue));
    co_return outcomes;
}

void ack_fusion::maybe_schedule_locked(bool& start_now) {
    if (!scheduled_ && inflight_ < options_.max_inflight && !pending_.empty()) {
        scheduled_ = true;
        ++inflight_;
        start_now = true;
    }
}

std::vector<ack_fusion::pending_request> ack_fusion::take_batch_locked() {
    // The oldest request's group and tenant scope; then, in arrival order, every request of that
    // group and scope whose partitions no request taken before it names, within max_acks. The
    // rest wait their turn.
    std::vector<pending_request> batch;
    std::vector<pending_request> left;
    std::unordered_set<std::int64_t> taken_partitions;
    std::size_t taken = 0;
    const std::string group = pending_.front().group;
    const std::optional<std::string> scope = pending_.front().scope;
    for (auto& r : pending_) {
        bool fits =
            r.group == group && r.scope == scope && (batch.empty() || taken + r.acks.size() <= options_.max_acks);
        if (fits)
            for (const auto& a : r.acks)
                if (taken_partitions.count(a.partition_id)) {
                    fits = false;
                    break;
                }
        if (!fits) {
            left.push_back(std::move(r));
            continue;
        }
        for (const auto& a : r.acks) taken_partitions.insert(a.partition_id);
        taken += r.acks.size();
        batch.push_back(std::move(r));
    }
    pending_ = std::move(left);
    return batch;
}

asio::awaitable<void> ack_fusion::flush_after_wait() {
    asio::steady_timer timer(executor_, options_.wait);
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    std::vector<pending_request> batch;
    {
        std::lock_guard lock(mutex_);
        batch = take_batch_locked();
        scheduled_ = false;
    }
    co_await flush(std::move(batch));
    bool start = false;
    {
        std::lock_guard lock(mutex_);
        --inflight_;
        maybe_schedule_locked(start);
    }
    if (start) asio::co_spawn(executor_, flush_after_wait(), asio::detached);
}

asio::awaitable<void> ack_fusion::apply_alone(std::shared_ptr<pending_request> r) {
    try {
        auto outcomes = co_await store::apply_acks(pool_, r->group, r->acks, r->scope);
        r->done(nullptr, std::move(outcomes));
    } catch (...) {
        r->done(std::current_exception(), {});
    }
}

asio::awaitable<void> ack_fusion::flush(std::vector<pending_request> batch) {
    if (batch.size() == 1) {
        co_await apply_alone(std::make_shared<pending_request>(std::move(batch[0])));
        co_return;
    }
    std::vector<const std::vector<store::ack_request>*> requests;
    for (const auto& r : batch) requests.push_back(&r.acks);
    std::vector<std::optional<std::vector<store::ack_outcome>>> results;
    bool fused = false;
    try {
        results = co_await store::apply_fused_acks(pool_, batch[0].group, requests, batch[0].scope);
        fused = true;
    } catch (const db::pg_error& e) {
        // A lost connection may have committed: the clients decide (an ack applied twice is a noop).
        if (e.kind() == db::pg_error_kind::connection_lost) {
            for (auto& r : batch) r.done(std::current_exception(), {});
            co_return;
        }
        log::debug("fused ack of {} requests failed ({}); applying them one by one", batch.size(), e.what());
    } catch (const std::exception& e) {
        log::warn("fused ack of {} requests failed; applying them one by one: {}", batch.size(), e.what());
    }
    // Requests left out of the fused call (busy or shared cursors), or all of them when it
    // failed, each in a call of its own, side by side: none waits for another's lock.
    for (std::size_t i = 0; i < batch.size(); ++i) {
        if (fused && results[i]) {
            batch[i].done(nullptr, std::move(*results[i]));
            continue;
        }
        auto alone = std::make_shared<pending_request>(std::move(batch[i]));
        asio::co_spawn(executor_, apply_alone(alone), asio::detached);
    }
}

}  // namespace queen::services
