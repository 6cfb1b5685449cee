#include "services/push_notifier.hpp"

#include "log/log.hpp"
#include "store/push_store.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

namespace queen::services {

push_notifier::push_notifier(boost::asio::any_io_executor executor, db::pg_pool& pool, pop_waiters& waiters,
                             std::string instance_id)
    : executor_(std::move(executor)), pool_(pool), waiters_(waiters), instance_id_(std::move(instance_id)) {}

void push_notifier::queues_changed(const std::vector<std::string>& queues) {
    for (const auto& q : queues) waiters_.wake(q, wake_reason::push);
    bool start = false;
    {
        std::lock_guard lock(mutex_);
        pending_.insert(queues.begin(), queues.end());
        if (!sending_ && !pending_.empty()) {
            sending_ = true;
            start = true;
        }
    }
    if (start) boost::asio::co_spawn(executor_, send_pending(), boost::asio::detached);
}

void push_notifier::on_notification(const std::string& payload) {
    // Payload: "<instance id>\n<queue name>". Our own notifications were handled locally.
    auto nl = payload.find('\n');
    if (nl == std::string::npos) return;
    if (payload.compare(0, nl, instance_id_) == 0) return;
    received_.fetch_add(1, std::memory_order_relaxed);
    waiters_.wake(payload.substr(nl + 1), wake_reason::notify);
}

boost::asio::awaitable<void> push_notifier::send_pending() {
    for (;;) {
        std::set<std::string> batch;
        {
            std::lock_guard lock(mutex_);
            if (pending_.empty()) {
                sending_ = false;
                co_return;
            }
            batch.swap(pending_);
        }
        std::vector<std::string> payloads;
        for (const auto& q : batch) payloads.push_back(instance_id_ + "\n" + q);
        try {
            co_await store::notify_brokers(pool_, channel, payloads);
            sent_.fetch_add(payloads.size(), std::memory_order_relaxed);
        } catch (const std::exception& e) {
            // Other brokers' parked pops fall back to their periodic re-check.
            log::warn("could not notify other brokers: {}", e.what());
        }
    }
}

}  // namespace queen::services
