#include "services/push_fusion.hpp"

#include "log/log.hpp"
#include "store/push_store.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <set>

namespace queen::services {

namespace asio = boost::asio;

push_fusion::push_fusion(asio::any_io_executor executor, db::pg_pool& pool, push_notifier& notifier,
                         push_fusion_options options)
    : executor_(std::move(executor)), pool_(pool), notifier_(notifier), options_(options) {}

asio::awaitable<std::vector<domain::push_outcome>> push_fusion::push(std::vector<domain::push_item> items) {
    if (items.empty()) co_return std::vector<domain::push_outcome>{};
    // The items travel through a shared_ptr: the registration callback is a copyable function.
    auto shared_items = std::make_shared<std::vector<domain::push_item>>(std::move(items));
    // A named function, not a lambda inside the co_await: GCC 12 destroys the captures of
    // a lambda written inside a co_await expression twice.
    std::function<void(util::completer<std::vector<domain::push_outcome>>)> enqueue =
        [this, shared_items](util::completer<std::vector<domain::push_outcome>> done) {
            bool start = false;
            {
                std::lock_guard lock(mutex_);
                pending_items_ += shared_items->size();
                pending_.push_back(pending_request{std::move(*shared_items), std::move(done)});
                maybe_schedule_locked(start);
            }
            if (start) asio::co_spawn(executor_, flush_after_wait(), asio::detached);
        };
    auto outcomes = co_await util::await_completion<std::vector<domain::push_outcome>>(std::move(enqueue));
    co_return outcomes;
}

void push_fusion::maybe_schedule_locked(bool& start_now) {
    if (!scheduled_ && inflight_ < options_.max_inflight && !pending_.empty()) {
        scheduled_ = true;
        ++inflight_;
        start_now = true;
    }
}

asio::awaitable<void> push_fusion::flush_after_wait() {
    if (options_.wait.count() > 0) {
        asio::steady_timer timer(executor_, options_.wait);
        boost::system::error_code ec;
        co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    std::vector<pending_request> batch;
    {
        std::lock_guard lock(mutex_);
        std::size_t taken = 0;
        std::size_t n = 0;
        while (n < pending_.size() && (n == 0 || taken + pending_[n].items.size() <= options_.max_items)) {
            taken += pending_[n].items.size();
            ++n;
        }
        batch.assign(std::make_move_iterator(pending_.begin()), std::make_move_iterator(pending_.begin() + n));
        pending_.erase(pending_.begin(), pending_.begin() + n);
        pending_items_ -= taken;
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

asio::awaitable<void> push_fusion::flush(std::vector<pending_request> batch) {
    std::vector<const std::vector<domain::push_item>*> requests;
    for (auto& r : batch) requests.push_back(&r.items);
    std::exception_ptr failure;
    try {
        const auto started = std::chrono::steady_clock::now();
        auto results = co_await store(pool_, requests);
        if (options_.on_fused_call) {
            std::size_t items = 0;
            for (const auto& r : batch) items += r.items.size();
            options_.on_fused_call(items, batch.size(), std::chrono::steady_clock::now() - started);
        }
        std::set<std::string> queues;
        for (std::size_t i = 0; i < batch.size(); ++i)
            for (std::size_t j = 0; j < batch[i].items.size(); ++j)
                if (results[i][j].queued) queues.insert(batch[i].items[j].queue);
        notifier_.queues_changed({queues.begin(), queues.end()});
        for (std::size_t i = 0; i < batch.size(); ++i) batch[i].done(nullptr, std::move(results[i]));
        co_return;
    } catch (const db::pg_error& e) {
        if (e.kind() == db::pg_error_kind::connection_lost || batch.size() == 1) failure = std::current_exception();
    } catch (...) {
        if (batch.size() == 1) failure = std::current_exception();
    }
    if (failure) {
        for (auto& r : batch) r.done(failure, {});
        co_return;
    }
    // Isolation: one member's failure must not fail its neighbours.
    log::warn("fused push of {} requests failed; retrying them one by one", batch.size());
    for (auto& r : batch) {
        try {
            std::vector<const std::vector<domain::push_item>*> single{&r.items};
            auto results = co_await store(pool_, single);
            std::set<std::string> queues;
            for (std::size_t j = 0; j < r.items.size(); ++j)
                if (results[0][j].queued) queues.insert(r.items[j].queue);
            notifier_.queues_changed({queues.begin(), queues.end()});
            r.done(nullptr, std::move(results[0]));
        } catch (...) {
            r.done(std::current_exception(), {});
        }
    }
}

asio::awaitable<std::vector<std::vector<domain::push_outcome>>> push_fusion::store(
    db::pg_pool& pool, const std::vector<const std::vector<domain::push_item>*>& requests) {
    for (int attempt = 1;; ++attempt) {
        try {
            co_return co_await store::push(pool, requests);
        } catch (const db::pg_error& e) {
            // Only a statement that certainly rolled back is retried here; a lost connection
            // may have committed, so the client decides (its transaction ids make that safe).
            bool rolled_back = e.kind() == db::pg_error_kind::deadlock || e.kind() == db::pg_error_kind::serialization;
            if (!rolled_back || attempt >= 3) throw;
        }
    }
}

}  // namespace queen::services
