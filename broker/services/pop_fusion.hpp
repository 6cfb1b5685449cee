#pragma once
// Pop fusion: concurrent queue-wide pops of one queue and consumer group (same autoAck and
// subscription) are answered from ONE call of queen.pop_fused: one claim walk, one transaction,
// one commit. Each (queue, group) has at most one call in flight; pops that arrive meanwhile
// wait for it and go together in the next one, so the more pops are waiting the fewer calls
// they cost. Each request gets exactly what queen.pop would have given it alone (its own
// lease, batch and partitions); a pop of one named partition, or any pop with fusion off, is
// its own call.
#include "db/pg_pool.hpp"
#include "store/pop_store.hpp"
#include "util/deferred.hpp"

#include <utility>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace queen::services {

struct pop_fusion_options {
    std::chrono::microseconds wait{0};  // how long the first pop of an idle lane waits for others
    std::size_t max_requests = 64;      // pops in one fused call; 1: every pop is its own call
    // Optional observer (metrics): the pops answered by each call a lane makes.
    std::function<void(std::size_t requests)> on_call;
};

class pop_fusion {
public:
    pop_fusion(boost::asio::any_io_executor executor, db::pg_pool& pool, pop_fusion_options options);

    // queen.pop's contract for this one claim (store::claim_spans). Throws db::pg_error (or
    // another exception) for this request.
    boost::asio::awaitable<store::claimed_spans> claim(store::pop_claim claim);

private:
    struct pending_request {
        store::pop_claim claim;
        util::completer<store::claimed_spans> done;
    };
    // The pops of one (queue, group, autoAck, subscription): waiting, and whether a call runs.
    struct lane {
        std::vector<pending_request> pending;
        bool running = false;
    };

    static std::string lane_key(const store::pop_claim& c);
    boost::asio::awaitable<void> run_lane(std::string key);
    boost::asio::awaitable<void> flush(std::vector<pending_request> batch);
    boost::asio::awaitable<void> claim_alone(std::shared_ptr<pending_request> r);

    boost::asio::any_io_executor executor_;
    db::pg_pool& pool_;
    pop_fusion_options options_;
    std::mutex mutex_;
    std::map<std::string, lane> lanes_;  // only lanes with pops waiting or a call running
};

}  // namespace queen::services
