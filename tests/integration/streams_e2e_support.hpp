#pragma once
// Helpers of the StreamsEndToEnd tests (streams_e2e_window_test.cpp, streams_e2e_kill9_test.cpp):
// a small client that follows the streaming SDK's protocol (register, then pop a batch with group
// streams.<name> → read state → one cycle with the state ops, the sink pushes and the ack of the
// batch's last message), and what the database holds of a stream's source and sink.
#include "test_env.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace queen::test::streams_e2e_support {

using nlohmann::json;
using namespace std::chrono_literals;

// A popped batch: one source partition's messages under one lease.
struct batch {
    std::string partition_id;
    std::string partition;
    json messages;
};

// What a batch turns into: the state ops and the sink pushes of its cycle.
struct cycle_ops {
    json state_ops = json::array();
    json push_items = json::array();
};

// A state op that sets `key` to `value`.
inline json upsert(const std::string& key, const json& value) {
    return {{"type", "upsert"}, {"key", key}, {"value", value}};
}
// A state op that deletes `key`.
inline json erase(const std::string& key) {
    return {{"type", "delete"}, {"key", key}};
}

// State rows (as state/get answers them) by key.
inline std::map<std::string, json> by_key(const json& rows) {
    std::map<std::string, json> out;
    for (const auto& r : rows) out[r["key"].get<std::string>()] = r["value"];
    return out;
}

// The SDK's side of the stream routes, over one keep-alive connection. A request that fails on
// the network (or answers 5xx, 408 or 429) is sent again, the same body, over a new connection,
// up to a few times. A cycle answered success:false is abandoned: the next pop decides what
// comes next. The hooks let a test crash the broker at chosen points; `n` is the number the
// next cycle body will have.
class stream_client {
public:
    using compute_fn = std::function<cycle_ops(stream_client&, const batch&)>;

    struct counters {
        int pops = 0, cycles_ok = 0, cycles_failed = 0, network_retries = 0, duplicate_pushes = 0,
            replays = 0;
        std::map<std::string, int> failures;  // error text of the cycles answered success:false
    };

    std::function<void(int n)> before_pop, after_pop, after_cycle;
    // Takes over the first send of cycle n; true when it sent it and the answer was lost.
    std::function<bool(int n, const json& body)> lose_cycle;
    std::function<bool(int n)> with_lease = [](int) { return true; };  // whether the ack names its lease

    stream_client(unsigned short port, std::string name, std::string source, std::string sink, int batch_size)
        : port_(port),
          name_(std::move(name)),
          source_(std::move(source)),
          sink_(std::move(sink)),
          batch_size_(batch_size) {}

    const std::string& query_id() const { return query_id_; }
    std::string group() const { return "streams." + name_; }
    const std::string& sink() const { return sink_; }
    const counters& stats() const { return stats_; }
    int next_cycle() const { return cycles_sent_ + 1; }

    void register_query() {
        const auto r = request(
            "POST", "/streams/v1/queries",
            json{{"name", name_}, {"source_queue", source_}, {"sink_queue", sink_}, {"config_hash", "e2e-v1"}}.dump());
        if (r.status != 200 || !r.json().value("success", false))
            throw std::runtime_error("register: " + std::to_string(r.status) + " " + r.body);
        query_id_ = r.json()["query_id"].get<std::string>();
    }

    // POST /streams/v1/state/get of one lane; `filter` adds keys, key_prefix, ripe_at_or_before.
    json state(const std::string& partition_id, json filter = json::object()) {
        filter["query_id"] = query_id_;
        filter["partition_id"] = partition_id;
        const auto r = request("POST", "/streams/v1/state/get", filter.dump());
        if (r.status != 200 || !r.json().value("success", false))
            throw std::runtime_error("state/get: " + std::to_string(r.status) + " " + r.body);
        return r.json()["rows"];
    }

    // One turn of the loop: pop, compute, one cycle that acks the batch's last message. The
    // number of messages popped (0: the pop answered 204).
    std::size_t step(const compute_fn& compute) {
        const int n = next_cycle();
        if (before_pop) before_pop(n);
        const auto r = request("GET",
                               "/api/v1/pop/queue/" + url_encode(source_) + "?consumerGroup=" + url_encode(group()) +
                                   "&batch=" + std::to_string(batch_size_) + "&wait=false",
                               "");
        if (r.status == 204) return 0;
        if (r.status != 200) throw std::runtime_error("pop: " + std::to_string(r.status) + " " + r.body);
        const json answer = r.json();
        batch b{answer["partitionId"].get<std::string>(), answer["partition"].get<std::string>(), answer["messages"]};
        if (b.messages.empty()) return 0;
        ++stats_.pops;
        if (after_pop) after_pop(n);
        const cycle_ops ops = compute(*this, b);
        json ack{{"transactionId", b.messages.back()["transactionId"]}};
        if (with_lease(n)) ack["leaseId"] = b.messages.back()["leaseId"];
        cycle(json{{"query_id", query_id_},
                   {"partition_id", b.partition_id},
                   {"consumer_group", group()},
                   {"state_ops", ops.state_ops},
                   {"push_items", ops.push_items},
                   {"ack", ack},
                   {"release_lease", true}});
        if (after_cycle) after_cycle(n);
        return b.messages.size();
    }

    // Loops until done() holds once a pop finds nothing, within `limit`; whether it did.
    bool run(const compute_fn& compute, const std::function<bool()>& done, std::chrono::seconds limit) {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        while (std::chrono::steady_clock::now() < deadline) {
            if (step(compute) > 0) continue;
            if (done()) return true;
            std::this_thread::sleep_for(100ms);  // leases of a dead broker's pops live on
        }
        return done();
    }

    // A cycle without an ack (a final flush of a lane); its success.
    bool flush(const std::string& partition_id, const cycle_ops& ops) {
        return cycle(json{{"query_id", query_id_},
                          {"partition_id", partition_id},
                          {"consumer_group", group()},
                          {"state_ops", ops.state_ops},
                          {"push_items", ops.push_items},
                          {"ack", nullptr}});
    }

private:
    http_reply request(const std::string& method, const std::string& target, const std::string& body) {
        for (int attempt = 0;; ++attempt) {
            if (attempt > 0) {
                ++stats_.network_retries;
                std::this_thread::sleep_for(attempt * 200ms);
            }
            try {
                if (!conn_) conn_ = std::make_unique<http_client>("127.0.0.1", port_);
                auto r = conn_->request(method, target, body);
                const bool retryable = r.status >= 500 || r.status == 408 || r.status == 429;
                if (!retryable || attempt >= 5) return r;
            } catch (const std::exception& e) {
                conn_.reset();
                if (attempt >= 5) throw std::runtime_error(method + " " + target + ": " + e.what());
            }
        }
    }

    // Sends one cycle body (again after a network failure); its success.
    bool cycle(const json& body) {
        const int n = ++cycles_sent_;
        if (lose_cycle && lose_cycle(n, body)) {  // lost on the network: reconnect, send it again
            ++stats_.network_retries;
            conn_.reset();
        }
        const auto r = request("POST", "/streams/v1/cycle", body.dump());
        if (r.status != 200) throw std::runtime_error("cycle: " + std::to_string(r.status) + " " + r.body);
        const json answer = r.json();
        if (!answer.value("success", false)) {
            ++stats_.cycles_failed;
            ++stats_.failures[answer.value("error", std::string("?"))];
            return false;
        }
        ++stats_.cycles_ok;
        if (!answer.value("applied", true)) ++stats_.replays;
        for (const auto& p : answer["push_results"])
            if (p.value("status", std::string()) == "duplicate") ++stats_.duplicate_pushes;
        return true;
    }

    unsigned short port_;
    std::string name_, source_, sink_;
    int batch_size_;
    std::string query_id_;
    std::unique_ptr<http_client> conn_;
    int cycles_sent_ = 0;
    counters stats_;
};

// The counters, for failure messages and the runs' reports.
inline std::ostream& operator<<(std::ostream& os, const stream_client::counters& s) {
    os << "pops " << s.pops << ", cycles ok " << s.cycles_ok << ", failed " << s.cycles_failed << ", network retries "
       << s.network_retries << ", duplicate pushes " << s.duplicate_pushes << ", replays " << s.replays;
    for (const auto& [error, count] : s.failures) os << "\n  failed x" << count << ": " << error;
    return os;
}

// Source partitions (those holding messages) whose cursor for `group` is not at their head.
inline long long uncommitted_partitions(const std::string& queue, const std::string& group) {
    return sql_int(
        cluster(),
        "SELECT count(*) FROM (SELECT partition_id, max(\"offset\") AS head FROM queen.messages WHERE queue = " +
            quote(queue) +
            " GROUP BY partition_id) m LEFT JOIN LATERAL (SELECT lc.committed FROM "
            "queen.log_consumers lc WHERE lc.partition_id = m.partition_id AND lc.consumer_group = " +
            quote(group) + " ORDER BY lc.version DESC LIMIT 1) c ON true WHERE coalesce(c.committed, 0) <> m.head");
}

// The ids of the queue's partitions that hold messages, ascending.
inline std::vector<std::string> source_partition_ids(const std::string& queue) {
    const auto text = cluster().run_sql(
        "SELECT string_agg(partition_id::text, ',' ORDER BY partition_id) FROM (SELECT DISTINCT partition_id FROM "
        "queen.messages WHERE queue = " +
        quote(queue) + ") p");
    std::vector<std::string> out;
    for (std::size_t at = 0; at < text.size();) {
        const auto comma = std::min(text.find(',', at), text.size());
        out.push_back(text.substr(at, comma - at));
        at = comma + 1;
    }
    return out;
}

// The payloads a queue holds, sorted by their JSON text (a multiset).
inline std::vector<json> payloads_of(const std::string& queue) {
    const auto all = json::parse(cluster().run_sql(
        "SELECT coalesce(jsonb_agg(payload), '[]'::jsonb)::text FROM queen.messages WHERE queue = " + quote(queue)));
    std::vector<json> out(all.begin(), all.end());
    std::sort(out.begin(), out.end(), [](const json& a, const json& b) { return a.dump() < b.dump(); });
    return out;
}

// Pushes (partition name, payload) items to `queue`, 500 a request, each answered 201.
inline void push_all(http_client& c, const std::string& queue, const std::vector<std::pair<std::string, json>>& items) {
    for (std::size_t at = 0; at < items.size(); at += 500) {
        json body = json::array();
        for (std::size_t i = at; i < std::min(items.size(), at + 500); ++i)
            body.push_back({{"queue", queue}, {"partition", items[i].first}, {"payload", items[i].second}});
        const auto r = c.post("/api/v1/push", json{{"items", body}});
        ASSERT_EQ(r.status, 201) << r.body;
    }
}

// The name of source partition `p`: p00, p01, … p99.
inline std::string partition_name(int p) {
    return (p < 10 ? "p0" : "p") + std::to_string(p);
}

}  // namespace queen::test::streams_e2e_support
