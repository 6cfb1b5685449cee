#pragma once
// Push fusion: concurrent push requests are coalesced into ONE call of queen.push, one
// transaction, one commit. A request waits at most `wait` for neighbours; a batch is
// flushed early when it reaches max_items. Each request gets its own per-item outcomes,
// and a request that fails inside a fused batch never fails its neighbours: the batch is
// retried member by member.
#include "db/pg_pool.hpp"
#include "domain/push_item.hpp"
#include "services/push_notifier.hpp"
#include "util/deferred.hpp"

#include <utility>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <functional>
#include <mutex>
#include <vector>

namespace queen::services {

struct push_fusion_options {
    std::chrono::microseconds wait{500};
    std::size_t max_items = 20000;
    std::size_t max_inflight = 4;  // concurrent fused transactions
    // Optional observer (metrics): each fused queen.push call that committed, its items,
    // requests and duration.
    std::function<void(std::size_t items, std::size_t requests, std::chrono::steady_clock::duration)> on_fused_call;
};

class push_fusion {
public:
    push_fusion(boost::asio::any_io_executor executor, db::pg_pool& pool, push_notifier& notifier,
                push_fusion_options options);

    // Stores the items (in one transaction with whatever it is fused with); outcomes in
    // item order. Throws db::pg_error (or another exception) for this request only.
    boost::asio::awaitable<std::vector<domain::push_outcome>> push(std::vector<domain::push_item> items);

    // Runs one batch as its own transaction, without fusion (also used to isolate failures).
    static boost::asio::awaitable<std::vector<std::vector<domain::push_outcome>>> store(
        db::pg_pool& pool, const std::vector<const std::vector<domain::push_item>*>& requests);

private:
    struct pending_request {
        std::vector<domain::push_item> items;
        util::completer<std::vector<domain::push_outcome>> done;
    };

    void maybe_schedule_locked(bool& start_now);
    boost::asio::awaitable<void> flush_after_wait();
    boost::asio::awaitable<void> flush(std::vector<pending_request> batch);

    boost::asio::any_io_executor executor_;
    db::pg_pool& pool_;
    push_notifier& notifier_;
    push_fusion_options options_;
    std::mutex mutex_;
    std::vector<pending_request> pending_;
    std::size_t pending_items_ = 0;
    std::size_t inflight_ = 0;
    bool scheduled_ = false;
};

}  // namespace queen::services
