#pragma once
// Shared fixtures of the integration suite: one throwaway PostgreSQL cluster and one default
// broker for the whole binary (created on first use), plus helpers. Tests isolate themselves
// with unique queue names; tests that need their own broker settings start a broker_process.
#include "broker_process.hpp"
#include "http_client.hpp"
#include "test_cluster.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace queen::test {

// Whether this run of the suite serves the default broker through a PL/Proxy database over four
// shard databases on two clusters (QUEEN_TEST_SHARDED=1): make test's integration-sharded pass
// runs the suites whose answers docs/scaling.md promises to be the same over shards.
bool sharded_run();

// The cluster of the default broker's database (in the sharded run, the proxy's cluster: its
// database holds no broker tables, so tests read those with the data_* helpers below).
test_cluster& cluster();
broker_process& broker();
// The default broker's QUEEN_DATABASE_URL (in the sharded run, the proxy).
std::string database_url();

// SQL over the broker's tables wherever they are: the one database, or every shard database.
// data_value: the value the databases that answer one agree on ("" when none answers a row or
// all are NULL; throws when two differ). data_sum: the integers (no row: 0) added up.
// data_rows: the first column of every row of each, in no particular order across databases.
// data_run: the statement run on each.
std::string data_value(const std::string& sql);
std::vector<std::string> data_rows(const std::string& sql);
long long data_sum(const std::string& sql);
void data_run(const std::string& sql);
http_client client();                              // a new connection to the default broker
http_client client_of(const broker_process& b);
std::string unique_name(const std::string& prefix);

// A SQL string literal: 'text' with quotes doubled.
std::string quote(const std::string& s);

// A fresh directory /tmp/queen-<what>-XXXXXX, removed with everything in it at destruction.
// shared: mode 0755, so that the postgres user can traverse it (tests run as root).
struct temp_dir {
    explicit temp_dir(const std::string& what = "test", bool shared = false);
    ~temp_dir();
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
    std::filesystem::path path;
};

// POST /api/v1/configure of `queue` with `options` (and a namespace and task when not empty);
// throws unless it answers 200.
void configure_queue(http_client& c, const std::string& queue, const nlohmann::json& options = nlohmann::json::object(),
                     const std::string& ns = "", const std::string& task = "");

// POST /api/v1/push of {queue, partition, payload} items (partition "" means omitted).
nlohmann::json push_payloads(http_client& c, const std::string& queue, const std::string& partition,
                             const std::vector<nlohmann::json>& payloads);

// GET pop; returns the reply (status 200 with messages, or 204).
http_reply pop(http_client& c, const std::string& queue, const std::string& query = "",
               const std::string& partition = "");

// GET target, expected to answer 200 (a test failure otherwise); its JSON, {} when it did not.
nlohmann::json get_ok(http_client& c, const std::string& target);

// The one integer a query answers; 0 for NULL.
long long sql_int(const test_cluster& db, const std::string& sql);

// Polls pred() every 100 ms until it holds or `limit` has passed; its last value.
bool eventually(const std::function<bool()>& pred, std::chrono::seconds limit = std::chrono::seconds(20));

// The pops parked on `b` now (its queen_longpoll_parked gauge).
double parked_pops(const broker_process& b);

// Waits (up to 20 s) until at least `count` pops are parked on `b`, or none at all for 0; a test
// failure otherwise. A pop that has not parked yet still gets a message on its first attempt, so
// a test of waking waits for this rather than for a fixed time.
void wait_parked(const broker_process& b, int count);

// Acks one message (as existing clients do: transactionId + partitionId + leaseId).
nlohmann::json ack(http_client& c, const nlohmann::json& message, const std::string& status = "completed",
                   const std::string& group = "");

// Worker threads that are told to stop (`stop` set) and joined when this goes out of scope,
// so that a test failing while they run (an ASSERT, a broker that does not start) ends as a
// failure of that test rather than std::terminate of the whole binary.
class joined_threads {
public:
    explicit joined_threads(std::atomic<bool>& stop) : stop_(stop) {}
    ~joined_threads() { join(); }
    joined_threads(const joined_threads&) = delete;
    joined_threads& operator=(const joined_threads&) = delete;
    template <class F, class... A>
    void start(F&& f, A&&... args) { threads_.emplace_back(std::forward<F>(f), std::forward<A>(args)...); }
    void join() {
        stop_ = true;
        for (auto& t : threads_)
            if (t.joinable()) t.join();
    }

private:
    std::atomic<bool>& stop_;
    std::vector<std::thread> threads_;
};

}  // namespace queen::test
