#pragma once
// Drains the broker's spool into PostgreSQL (docs/maintenance-and-spool.md): whenever the
// spool holds records and push maintenance is off, batches of whole push requests are read
// in file order and stored in ONE transaction each; after the commit the spool notes the
// progress (and removes its file once empty). While the database is unreachable the drainer
// retries with back-off (250 ms .. 2 s). A batch with in-doubt records (see spool_file.hpp)
// goes through queen.push_spooled, which probes them whatever the queue's dedup window;
// other batches go through queen.push like any push.
#include "db/pg_pool.hpp"
#include "maintenance/maintenance_flags.hpp"
#include "services/push_notifier.hpp"
#include "spool/spool_file.hpp"

#include <utility>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

namespace queen::spool {

struct drainer_options {
    std::size_t batch_records = 2000;
    std::size_t batch_bytes = 8u << 20;
    // Subtracted from a record's acceptance time to bound the probe of an in-doubt record
    // (covers clock skew between the broker and PostgreSQL).
    std::chrono::seconds probe_margin{300};
    // Every batch goes through queen.push_spooled, which lifts QUEEN_TENANT_MAX_QUEUES: a
    // spooled push was accepted, so its queue is created even past its tenant's limit.
    bool past_tenant_queue_limit = false;
    // Called after each drained batch committed, per item: its queue, and false for a duplicate.
    std::function<void(const std::string& queue, bool stored)> on_drained_item;
};

struct drainer_status {
    bool draining = false;             // records pending and a drain is being attempted
    std::uint64_t drained_total = 0;   // records drained since start (duplicates included)
    std::string last_error;            // the last failure, "" after a successful batch
    std::uint64_t failed_batches = 0;  // drain attempts that failed since start
};

class spool_drainer {
public:
    spool_drainer(boost::asio::any_io_executor executor, db::pg_pool& pool, services::push_notifier& notifier,
                  maintenance::maintenance_flags& flags, spool_file& spool, drainer_options options = {});
    void start();
    void stop();
    // Look at the spool now (a push was spooled, maintenance ended).
    void kick();
    drainer_status status() const;

private:
    boost::asio::awaitable<void> run();
    // Drains one batch; returns how many records it drained (0: nothing to do).
    boost::asio::awaitable<std::size_t> drain_once();

    boost::asio::strand<boost::asio::any_io_executor> strand_;
    db::pg_pool& pool_;
    services::push_notifier& notifier_;
    maintenance::maintenance_flags& flags_;
    spool_file& spool_;
    drainer_options options_;
    boost::asio::steady_timer timer_;
    std::atomic<bool> stopped_{false};
    std::atomic<bool> kicked_{false};
    mutable std::mutex mu_;
    drainer_status status_;
};

}  // namespace queen::spool
