#pragma once
// Ack fusion: concurrent acknowledgement requests of one consumer group are answered from ONE
// call of queen.ack_fused, one transaction, one commit. A batch holds requests on disjoint
// partitions, so each is applied exactly as it would be alone; a request whose cursor another
// transaction holds is not waited for inside the batch but applied on its own afterwards, and
// a batch that fails is retried member by member, so no request fails or waits because of a
// neighbour.
#include "db/pg_pool.hpp"
#include "store/acks_store.hpp"
#include "util/deferred.hpp"

#include <utility>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace queen::services {

struct ack_fusion_options {
    std::chrono::microseconds wait{500};  // 0: every request is its own call
    std::size_t max_acks = 10000;         // acks in one fused call
    std::size_t max_inflight = 1;         // fused calls at once
};

class ack_fusion {
public:
    ack_fusion(boost::asio::any_io_executor executor, db::pg_pool& pool, ack_fusion_options options);

    // Applies the acks of one request of `group` in tenant `scope` (queen.ack's contract);
    // outcomes with item = position in `acks`. Requests of different scopes are never fused.
    // Throws db::pg_error (or another exception) for this request only.
    boost::asio::awaitable<std::vector<store::ack_outcome>> apply(std::string group,
                                                                  std::vector<store::ack_request> acks,
                                                                  std::optional<std::string> scope);

private:
    struct pending_request {
        std::string group;
        std::optional<std::string> scope;
        std::vector<store::ack_request> acks;
        util::completer<std::vector<store::ack_outcome>> done;
    };

    void maybe_schedule_locked(bool& start_now);
    std::vector<pending_request> take_batch_locked();
    boost::asio::awaitable<void> flush_after_wait();
    boost::asio::awaitable<void> flush(std::vector<pending_request> batch);
    boost::asio::awaitable<void> apply_alone(std::shared_ptr<pending_request> r);

    boost::asio::any_io_executor executor_;
    db::pg_pool& pool_;
    ack_fusion_options options_;
    std::mutex mutex_;
    std::vector<pending_request> pending_;
    std::size_t inflight_ = 0;
    bool scheduled_ = false;
};

}  // namespace queen::services
