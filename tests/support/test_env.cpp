#include "test_env.hpp"

#include "prometheus_samples.hpp"
#include "sharded_deployment.hpp"

#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace queen::test {
namespace {

struct shared_env {
    std::unique_ptr<test_cluster> cluster;            // the one database's cluster, or
    std::unique_ptr<sharded_deployment> deployment;   // in the sharded run, the proxy and shards
    std::unique_ptr<broker_process> broker;
    ~shared_env() {
        broker.reset();
        deployment.reset();
        cluster.reset();
    }
};

shared_env& env() {
    static shared_env e;
    return e;
}

}  // namespace

// Tests call these from several threads: creation is serialized.
std::recursive_mutex env_mutex;

bool sharded_run() {
    const char* v = std::getenv("QUEEN_TEST_SHARDED");
    return v && std::string(v) == "1";
}

namespace {

sharded_deployment& deployment() {
    std::lock_guard lock(env_mutex);
    auto& e = env();
    if (!e.deployment) {
        e.deployment = std::make_unique<sharded_deployment>("queen_test");
        e.deployment->init();
    }
    return *e.deployment;
}

}  // namespace

test_cluster& cluster() {
    std::lock_guard lock(env_mutex);
    if (sharded_run()) return deployment().a;
    auto& e = env();
    if (!e.cluster) e.cluster = std::make_unique<test_cluster>();
    return *e.cluster;
}

std::string database_url() { return cluster().conninfo(); }

broker_process& broker() {
    std::lock_guard lock(env_mutex);
    auto& e = env();
    if (!e.broker) e.broker = std::make_unique<broker_process>(database_url());
    return *e.broker;
}

std::string data_value(const std::string& sql) {
    if (!sharded_run()) return cluster().run_sql(sql);
    const auto& d = deployment();
    std::string agreed;
    for (std::size_t i = 0; i < d.shards.size(); ++i) {
        const auto v = d.on_shard(i, sql);
        if (v.empty()) continue;
        if (!agreed.empty() && v != agreed)
            throw std::runtime_error("data_value(" + sql + "): the shards answer " + agreed + " and " + v);
        agreed = v;
    }
    return agreed;
}

long long data_sum(const std::string& sql) {
    if (!sharded_run()) return sql_int(cluster(), sql);
    return deployment().sum_on_shards(sql);
}

std::vector<std::string> data_rows(const std::string& sql) {
    if (!sharded_run()) return cluster().column_in(cluster().database(), sql);
    const auto& d = deployment();
    std::vector<std::string> rows;
    for (std::size_t i = 0; i < d.shards.size(); ++i) {
        auto here = d.rows_on_shard(i, sql);
        rows.insert(rows.end(), here.begin(), here.end());
    }
    return rows;
}

void data_run(const std::string& sql) {
    if (!sharded_run()) {
        cluster().run_sql(sql);
        return;
    }
    const auto& d = deployment();
    for (std::size_t i = 0; i < d.shards.size(); ++i) d.on_shard(i, sql);
}

http_client client() { return http_client("127.0.0.1", broker().port()); }
http_client client_of(const broker_process& b) { return http_client("127.0.0.1", b.port()); }

std::string unique_name(const std::string& prefix) {
    static std::atomic<int> counter{0};
    return prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
}

std::string quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) {
        if (c == '\'') out += '\'';
        out += c;
    }
    return out + "'";
}

nlohmann::json push_payloads(http_client& c, const std::string& queue, const std::string& partition,
                             const std::vector<nlohmann::json>& payloads) {
    nlohmann::json items = nlohmann::json::array();
    for (const auto& p : payloads) {
        nlohmann::json item{{"queue", queue}, {"payload", p}};
        if (!partition.empty()) item["partition"] = partition;
        items.push_back(item);
    }
    auto r = c.post("/api/v1/push", nlohmann::json{{"items", items}});
    if (r.status != 201) throw std::runtime_error("push failed: " + std::to_string(r.status) + " " + r.body);
    return r.json();
}

http_reply pop(http_client& c, const std::string& queue, const std::string& query, const std::string& partition) {
    std::string target = "/api/v1/pop/queue/" + url_encode(queue);
    if (!partition.empty()) target += "/partition/" + url_encode(partition);
    if (!query.empty()) target += "?" + query;
    return c.get(target);
}

nlohmann::json ack(http_client& c, const nlohmann::json& message, const std::string& status, const std::string& group) {
    nlohmann::json body{{"transactionId", message["transactionId"]},
                        {"partitionId", message["partitionId"]},
                        {"leaseId", message["leaseId"]},
                        {"status", status},
                        {"consumerGroup", group.empty() ? nlohmann::json() : nlohmann::json(group)},
                        {"error", nullptr}};
    auto r = c.post("/api/v1/ack", body);
    if (r.status != 200) throw std::runtime_error("ack failed: " + std::to_string(r.status) + " " + r.body);
    return r.json();
}

bool eventually(const std::function<bool()>& pred, std::chrono::seconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
        if (pred()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return pred();
}

double parked_pops(const broker_process& b) {
    http_client c = client_of(b);
    for (const auto& s : parse_exposition(c.get("/metrics/prometheus").body))
        if (s.name == "queen_longpoll_parked") return s.value;
    return -1;
}

void wait_parked(const broker_process& b, int count) {
    const auto reached = [&] { return count == 0 ? parked_pops(b) == 0 : parked_pops(b) >= count; };
    EXPECT_TRUE(eventually(reached)) << "expected " << count << " parked pops, the broker has " << parked_pops(b);
}

nlohmann::json get_ok(http_client& c, const std::string& target) {
    auto r = c.get(target);
    EXPECT_EQ(r.status, 200) << target << ": " << r.body;
    return r.status == 200 ? r.json() : nlohmann::json::object();
}

long long sql_int(const test_cluster& db, const std::string& sql) {
    const auto v = db.run_sql(sql);
    return v.empty() ? 0 : std::stoll(v);
}

temp_dir::temp_dir(const std::string& what, bool shared) {
    std::string tmpl = "/tmp/queen-" + what + "-XXXXXX";
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp " + tmpl + ": " + std::strerror(errno));
    path = tmpl;
    if (shared) ::chmod(path.c_str(), 0755);
}

temp_dir::~temp_dir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
}

void configure_queue(http_client& c, const std::string& queue, const nlohmann::json& options, const std::string& ns,
                     const std::string& task) {
    nlohmann::json body{{"queue", queue}, {"options", options}};
    if (!ns.empty()) body["namespace"] = ns;
    if (!task.empty()) body["task"] = task;
    const auto r = c.post("/api/v1/configure", body);
    if (r.status != 200) throw std::runtime_error("configure " + queue + ": " + std::to_string(r.status) + " " + r.body);
}

}  // namespace queen::test
