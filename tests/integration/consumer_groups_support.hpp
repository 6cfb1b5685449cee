#pragma once
// Helpers of the ConsumerGroups tests (consumer_groups_*_test.cpp): draining a group, its cursors
// and recorded start as the database holds them, and the fixture with the consumer-group routes.
#include "test_env.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace queen::test::consumer_groups_support {

using nlohmann::json;
using namespace std::chrono_literals;

// Whether `v` is a time stamp as the API prints it (ISO 8601, microseconds, UTC).
inline bool is_iso_us(const json& v) {
    static const std::regex re(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$)");
    return v.is_string() && std::regex_match(v.get<std::string>(), re);
}

// The database's current time as the API prints it.
inline std::string db_now_iso() {
    return cluster().run_sql("SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', "
                             "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')");
}

// A time stamp strictly between two pushes.
inline std::string instant_between() {
    std::this_thread::sleep_for(20ms);
    std::string t = db_now_iso();
    std::this_thread::sleep_for(20ms);
    return t;
}

// The pop query of `group`: batch=10 and the group, then `extra` when given.
inline std::string group_query(const std::string& group, const std::string& extra = "") {
    std::string q = "batch=10&consumerGroup=" + url_encode(group);
    if (!extra.empty()) q += "&" + extra;
    return q;
}

// Acks every message of a pop body (completed), as existing clients do.
inline void ack_body(http_client& c, const json& body, const std::string& group) {
    json acks = json::array();
    for (const auto& m : body["messages"])
        acks.push_back({{"transactionId", m["transactionId"]}, {"partitionId", m["partitionId"]},
                        {"leaseId", m["leaseId"]}, {"status", "completed"}, {"error", nullptr}});
    auto a = c.post("/api/v1/ack/batch", json{{"consumerGroup", group}, {"acknowledgments", acks}});
    if (a.status != 200) throw std::runtime_error("ack answered " + std::to_string(a.status) + " " + a.body);
    for (const auto& x : a.json())
        if (x["success"] != true) throw std::runtime_error("ack failed: " + x.dump());
}

// Pops and acks until a pop answers 204; the payloads in delivery order.
inline std::vector<std::string> drain(http_client& c, const std::string& queue, const std::string& group,
                                      const std::string& extra = "") {
    std::vector<std::string> out;
    for (int guard = 0; guard < 100; ++guard) {
        auto r = pop(c, queue, group_query(group, extra));
        if (r.status == 204) return out;
        if (r.status != 200) throw std::runtime_error("pop answered " + std::to_string(r.status) + " " + r.body);
        json body = r.json();
        for (const auto& m : body["messages"]) out.push_back(m["data"].get<std::string>());
        ack_body(c, body, group);
    }
    throw std::runtime_error("drain did not finish");
}

// `v` sorted ascending.
inline std::vector<std::string> sorted(std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
}
// Payloads in delivery order, as drain() gives them.
using names = std::vector<std::string>;

// The group's cursors on a queue: "partition=committed[/leased]" in partition-name order.
inline std::string cursors(const std::string& queue, const std::string& group) {
    auto rows = data_rows(
        "SELECT p.name || '=' || c.committed || CASE WHEN c.lease_id IS NOT NULL THEN '/leased' "
        "ELSE '' END || CASE WHEN c.attempts > 0 THEN '/attempts' ELSE '' END || CASE WHEN c.retry_at IS NOT NULL "
        "THEN '/retry' ELSE '' END FROM queen.log_consumers c JOIN queen.log_partitions p "
        "ON p.id = c.partition_id JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = " +
        quote(queue) + " AND c.consumer_group = " + quote(group));
    std::sort(rows.begin(), rows.end());  // partition names here are plain ASCII: byte order is name order
    std::string out;
    for (const auto& row : rows) out += (out.empty() ? "" : ",") + row;
    return out;
}

// The group's recorded subscription start on the queue as the API prints it; "beginning" for none.
inline std::string subscription_of(const std::string& queue, const std::string& group) {
    return data_value("SELECT coalesce(to_char(subscription_at AT TIME ZONE 'UTC', "
                             "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), 'beginning') FROM queen.consumer_groups "
                             "WHERE queue_name = " + quote(queue) + " AND consumer_group = " + quote(group));
}

// The fixture: a connection to the shared broker, and the consumer-group routes through it. Here,
// in a named namespace, because GoogleTest wants one fixture class for all of a suite's files.
class ConsumerGroups : public ::testing::Test {
protected:
    http_reply seek(const std::string& group, const std::string& queue, const std::string& body) {
        return c.request("POST", "/api/v1/consumer-groups/" + url_encode(group) + "/queues/" + url_encode(queue) +
                                     "/seek", body, {{"Content-Type", "application/json"}});
    }
    http_reply seek_partition(const std::string& group, const std::string& queue, const std::string& partition) {
        return c.post("/api/v1/consumer-groups/" + url_encode(group) + "/queues/" + url_encode(queue) +
                          "/partitions/" + url_encode(partition) + "/seek",
                      std::string());
    }
    http_reply del(const std::string& group, const std::string& queue = "", const std::string& query = "") {
        std::string target = "/api/v1/consumer-groups/" + url_encode(group);
        if (!queue.empty()) target += "/queues/" + url_encode(queue);
        if (!query.empty()) target += "?" + query;
        return c.del(target);
    }
    http_reply subscription(const std::string& group, const std::string& body) {
        return c.request("POST", "/api/v1/consumer-groups/" + url_encode(group) + "/subscription", body,
                         {{"Content-Type", "application/json"}});
    }
    json detail(const std::string& group) {
        auto r = c.get("/api/v1/consumer-groups/" + url_encode(group));
        EXPECT_EQ(r.status, 200) << r.body;
        return r.status == 200 ? r.json() : json::object();
    }
    // A stats snapshot now (the listing reads it); retried while the broker's own refresh runs.
    void refresh() {
        for (int i = 0; i < 100; ++i) {
            auto r = c.post("/api/v1/stats/refresh", std::string("{}"));
            ASSERT_EQ(r.status, 200) << r.body;
            if (!r.json().value("skipped", false)) return;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        FAIL() << "the stats refresh stayed busy";
    }
    // The listing's entry of a (group, queue) after a refresh (null when absent).
    json listed(const std::string& group, const std::string& queue) {
        refresh();
        auto r = c.get("/api/v1/consumer-groups");
        EXPECT_EQ(r.status, 200) << r.body;
        for (const auto& g : r.json())
            if (g["name"] == group && g["queueName"] == queue) return g;
        return json();
    }

    http_client c = client();
};

}  // namespace queen::test::consumer_groups_support
