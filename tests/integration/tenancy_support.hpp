#pragma once
// Helpers of the Tenancy and TenancyClaims tests (tenancy_delivery, _admin, _observability and
// _claims_test.cpp): requests as a tenant, push bodies whose payloads name their tenant, and what
// the database stores under a tenant's key.
#include "stats_refresh.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace queen::test::tenancy_support {

using nlohmann::json;
using namespace std::chrono_literals;

// The tenancy header of the brokers of these tests (QUEEN_TENANCY_HEADER).
inline const std::string header = "X-Tenant";

// A request as `tenant` (no header when empty), with `token` as its bearer token when given.
inline http_reply as_tenant(http_client& c, const std::string& tenant, const std::string& method, const std::string& target,
                            const std::string& body = "", const std::string& token = "") {
    std::map<std::string, std::string> headers;
    if (!tenant.empty()) headers[header] = tenant;
    if (!token.empty()) headers["Authorization"] = "Bearer " + token;
    if (!body.empty()) headers["Content-Type"] = "application/json";
    return c.request(method, target, body, headers);
}

// A new stats snapshot, taken by this request: a refresh that another session's (a broker's
// timer) holds the lock of answers skipped, and is asked again.
inline void refresh_stats(http_client& c) {
    ASSERT_TRUE(refresh_stats_taken([&] { return as_tenant(c, "", "POST", "/api/v1/stats/refresh"); }))
        << "every stats refresh was skipped";
}

// A push body of `n` messages to `queue`, partition p1, transaction ids `txid_prefix`0…, payloads naming `tenant`.
inline json push_items(const std::string& queue, const std::string& tenant, int n, const std::string& txid_prefix = "tx-") {
    json items = json::array();
    for (int i = 0; i < n; ++i)
        items.push_back({{"queue", queue},
                         {"partition", "p1"},
                         {"transactionId", txid_prefix + std::to_string(i)},
                         {"payload", {{"tenant", tenant}, {"i", i}}}});
    return json{{"items", items}};
}

// The payload tenants of a pop's messages, in order.
inline std::vector<std::string> tenants_in(const http_reply& popped) {
    std::vector<std::string> out;
    if (popped.status != 200) return out;
    const json answer = popped.json();
    for (const auto& m : answer["messages"]) out.push_back(m["data"]["tenant"].get<std::string>());
    return out;
}

// What the database holds of a stored key: "<tenant or null>:<messages>" ("" when no queue has
// it; over shards, where the queue's row is on several databases, they must agree on its tenant).
inline std::string stored(const std::string& key) {
    const auto tenants = data_rows("SELECT coalesce(tenant, 'null') FROM queen.queues WHERE name = " + quote(key));
    if (tenants.empty()) return "";
    const std::set<std::string> distinct(tenants.begin(), tenants.end());
    if (distinct.size() != 1) return "the databases disagree on its tenant";
    return *distinct.begin() + ":" +
           std::to_string(data_sum("SELECT count(*) FROM queen.messages WHERE queue = " + quote(key)));
}

// The name a tenant's queue is stored under: the tenant, U+001F, the queue.
inline std::string key_of(const std::string& tenant, const std::string& queue) {
    return tenant + '\x1f' + queue;
}

// The environment of a broker with tenancy on, by the header.
inline std::map<std::string, std::string> tenancy_env() {
    return {{"QUEEN_TENANCY_HEADER", header}};
}

}  // namespace queen::test::tenancy_support
