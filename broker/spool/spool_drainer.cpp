#include "spool/spool_drainer.hpp"

#include "domain/message_id.hpp"
#include "log/log.hpp"
#include "store/push_store.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <set>

namespace queen::spool {

namespace asio = boost::asio;

spool_drainer::spool_drainer(asio::any_io_executor executor, db::pg_pool& pool, services::push_notifier& notifier,
                             maintenance::maintenance_flags& flags, spool_file& spool, drainer_options options)
    : strand_(asio::make_strand(executor)),
      pool_(pool),
      notifier_(notifier),
      flags_(flags),
      spool_(spool),
      options_(options),
      timer_(strand_) {}

void spool_drainer::start() {
    asio::co_spawn(strand_, run(), asio::detached);
}

void spool_drainer::stop() {
    stopped_ = true;
    kick();
}

void spool_drainer::kick() {
    kicked_ = true;
    asio::post(strand_, [this] { timer_.cancel(); });
}

drainer_status spool_drainer::status() const {
    std::lock_guard lock(mu_);
    return status_;
}

asio::awaitable<void> spool_drainer::run() {
    std::chrono::milliseconds backoff{250};
    while (!stopped_) {
        std::chrono::milliseconds pause{250};
        if (spool_.pending() > 0 && !flags_.push_paused()) {
            {
                std::lock_guard lock(mu_);
                status_.draining = true;
            }
            bool failed = false;
            std::string failure;
            std::size_t drained = 0;
            try {
                drained = co_await drain_once();
            } catch (const db::pg_error& e) {
                failed = true;
                failure = e.kind() == db::pg_error_kind::connection_lost
                              ? std::string("database unavailable: ") + e.what()
                              : std::string("database error ") + e.sqlstate() + ": " + e.what();
            } catch (const std::exception& e) {
                failed = true;
                failure = e.what();
            }
            if (!failed) {
                backoff = std::chrono::milliseconds(250);
                if (drained > 0) {
                    std::lock_guard lock(mu_);
                    status_.last_error.clear();
                    continue;  // more may be waiting: no pause
                }
            } else {
                bool first = false;
                {
                    std::lock_guard lock(mu_);
                    first = status_.last_error != failure;
                    status_.last_error = failure;
                    ++status_.failed_batches;
                }
                if (first) log::warn("spool: drain paused: {} (retrying)", failure);
                pause = backoff;
                backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
            }
        } else {
            std::lock_guard lock(mu_);
            status_.draining = false;
        }
        if (kicked_.exchange(false)) continue;
        timer_.expires_after(pause);
        boost::system::error_code ec;
        co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
}

asio::awaitable<std::size_t> spool_drainer::drain_once() {
    auto batch = co_await spool_.read_batch(options_.batch_records, options_.batch_bytes);
    if (batch.records.empty()) co_return 0;

    // The records as push items, one "request", grouped by (queue, partition) in file order.
    std::vector<domain::push_item> items;
    items.reserve(batch.records.size());
    bool any_in_doubt = false;
    for (const auto& r : batch.records) {
        items.push_back(r.item);
        any_in_doubt = any_in_doubt || r.in_doubt;
    }
    // An item that may have committed before the outage is probed for since a little before
    // it was accepted.
    std::vector<std::optional<std::int64_t>> probe_since;
    const bool through_push_spooled = any_in_doubt || options_.past_tenant_queue_limit;
    if (through_push_spooled) {
        const auto margin_us = std::chrono::duration_cast<std::chrono::microseconds>(options_.probe_margin).count();
        for (const auto& rec : batch.records)
            probe_since.push_back(rec.in_doubt ? std::optional<std::int64_t>(rec.accepted_at_us - margin_us)
                                               : std::nullopt);
    }

    co_await spool_.mark_inflight(batch.end);
    std::vector<domain::push_outcome> outcomes;
    for (int attempt = 1;; ++attempt) {
        try {
            if (through_push_spooled) {
                outcomes = co_await store::push_spooled(pool_, items, probe_since);
            } else {
                const std::vector<const std::vector<domain::push_item>*> request{&items};
                auto per_request = co_await store::push(pool_, request);
                outcomes = std::move(per_request.front());
            }
            break;
        } catch (const db::pg_error& e) {
            bool rolled_back = e.kind() == db::pg_error_kind::deadlock || e.kind() == db::pg_error_kind::serialization;
            if (!rolled_back || attempt >= 3) throw;
        }
    }
    std::size_t duplicates = 0;
    for (const auto& o : outcomes)
        if (!o.queued) ++duplicates;

    co_await spool_.mark_drained(batch.end, batch.records.size());
    if (options_.on_drained_item)
        for (std::size_t i = 0; i < items.size(); ++i) options_.on_drained_item(items[i].queue, outcomes[i].queued);
    std::set<std::string> queues;
    for (const auto& r : batch.records) queues.insert(r.item.queue);
    notifier_.queues_changed({queues.begin(), queues.end()});
    {
        std::lock_guard lock(mu_);
        status_.drained_total += batch.records.size();
    }
    log::info("spool: drained {} record(s) ({} duplicate(s){}); {} left", batch.records.size(), duplicates,
              any_in_doubt ? ", in-doubt records probed" : "", spool_.pending());
    co_return batch.records.size();
}

}  // namespace queen::spool
