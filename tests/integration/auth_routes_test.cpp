// With JWT_ENABLED=true, every route of the route table (the broker's own table, linked in)
// is walked with no token, a bad signature, an expired token, a token without a role and a
// token of each level: 401 / 403 with the contract's text below the route's level, and
// neither 401 nor 403 at or above it. The refused requests change nothing in the database.
#include "auth_support.hpp"

#include "api/route_table.hpp"

#include <gtest/gtest.h>

namespace queen::test {
namespace {

using nlohmann::json;
using namespace auth_support;
using api::access_level;

// JWT_SKIP_PATHS' default (docs/security.md): these need no token.
const std::vector<std::string> default_skip_paths{"/health", "/metrics/prometheus", "/metrics", "/"};

struct state {
    std::string queue;           // holds one message
    std::string created_queue;   // must not come to exist
    std::string partition_id;
    std::string transaction_id;
};

// A concrete target for a route pattern, its parameters filled from the state.
std::string target_of(const api::route_spec& r, const state& s) {
    std::string out;
    std::size_t i = 0;
    const std::string_view path = r.path;
    while (i < path.size()) {
        if (path[i] == ':' && path[i - 1] == '/') {
            auto end = path.find('/', i);
            if (end == std::string_view::npos) end = path.size();
            const std::string name(path.substr(i + 1, end - i - 1));
            if (name == "queue") out += url_encode(s.queue);
            else if (name == "partition") out += "Default";
            else if (name == "partitionId") out += s.partition_id;
            else if (name == "transactionId") out += url_encode(s.transaction_id);
            else if (name == "leaseId") out += "00000000-0000-0000-0000-000000000001";
            else if (name == "file") out += "app.js";
            else out += "auth-walk-" + name;
            i = end;
        } else {
            out += path[i++];
        }
    }
    if (out.find("/pop/") != std::string::npos) out += "?wait=false";
    return out;
}

// A body that would change something if it were admitted (refused: true), or one that
// leaves the shared database's broker-wide flags alone (refused: false).
std::string body_of(const api::route_spec& r, const state& s, bool refused) {
    if (r.method != http::bhttp::verb::post) return "";
    const std::string path(r.path);
    if (path == "/api/v1/push") return push_body(s.queue);
    if (path == "/api/v1/configure") return json{{"queue", s.created_queue}}.dump();
    if (path == "/streams/v1/queries")
        return json{{"name", s.created_queue}, {"source_queue", s.queue}, {"config_hash", "h"}}.dump();
    if (path == "/api/v1/transaction")
        return json{{"operations", {{{"type", "push"}, {"items", {{{"queue", s.queue}, {"payload", 2}}}}}}}}.dump();
    if (path.rfind("/api/v1/system/maintenance", 0) == 0) return json{{"enabled", refused}}.dump();
    if (path == "/api/v1/ack")
        return json{{"transactionId", s.transaction_id}, {"partitionId", s.partition_id}, {"status", "completed"}}
            .dump();
    return "{}";
}

access_level needed(const api::route_spec& r) {
    for (const auto& p : default_skip_paths)
        if (p == r.path) return access_level::anyone;
    return r.access;
}

bool passes(const http_reply& r) { return r.status != 401 && r.status != 403; }

TEST(AuthRouteTable, EveryRouteNeedsItsLevelAndRefusalsChangeNothing) {
    broker_process b(cluster().conninfo(),
                     {{"JWT_ENABLED", "true"}, {"JWT_ALGORITHM", "HS256"}, {"JWT_SECRET", secret}});
    auto c = client_of(b);
    const std::string admin = jwt::token("HS256", jwt::claims("walker-admin", "admin"), nullptr, secret);
    const std::string read_write = jwt::token("HS256", jwt::claims("walker-rw", "read-write"), nullptr, secret);
    const std::string read_only = jwt::token("HS256", jwt::claims("walker-ro", "read-only"), nullptr, secret);
    const std::string no_role = jwt::token("HS256", jwt::claims("walker-none", ""), nullptr, secret);
    const std::string bad_signature =
        jwt::token("HS256", jwt::claims("walker-admin", "admin"), nullptr, secret + "-not-it");
    json old = jwt::claims("walker-admin", "admin");
    old["iat"] = jwt::now_s() - 7200;
    old["exp"] = jwt::now_s() - 3600;
    const std::string expired = jwt::token("HS256", old, nullptr, secret);

    state s{unique_name("auth-walk"), unique_name("auth-walk-created"), "", ""};
    auto pushed = send(c, "POST", "/api/v1/push", admin, push_body(s.queue));
    ASSERT_EQ(pushed.status, 201) << pushed.body;
    s.transaction_id = pushed.json()[0]["transaction_id"];
    s.partition_id = cluster().run_sql(
        "SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = " +
        quote(s.queue));

    std::size_t walked = 0, guarded = 0;
    for (const auto& r : api::route_table()) {
        const std::string method(http::bhttp::to_string(r.method));
        const std::string target = target_of(r, s);
        const std::string body = body_of(r, s, true);
        const std::string where = method + " " + std::string(r.path);
        const access_level level = needed(r);
        ++walked;
        if (level == access_level::anyone) {
            for (const auto& t : {std::string(), bad_signature, expired, no_role})
                EXPECT_TRUE(passes(send(c, method, target, t, body))) << where << " is public";
            continue;
        }
        ++guarded;
        auto none = send(c, method, target, "", body);
        EXPECT_EQ(none.status, 401) << where;
        EXPECT_EQ(error_of(none), "Authentication required") << where;
        auto bad = send(c, method, target, bad_signature, body);
        EXPECT_EQ(bad.status, 401) << where;
        EXPECT_EQ(error_of(bad), "Invalid token signature") << where;
        auto late = send(c, method, target, expired, body);
        EXPECT_EQ(late.status, 401) << where;
        EXPECT_EQ(error_of(late), "Token has expired") << where;
        auto roleless = send(c, method, target, no_role, body);
        EXPECT_EQ(roleless.status, 403) << where;
        EXPECT_EQ(error_of(roleless), "Insufficient permissions") << where;
        const std::vector<std::pair<access_level, std::string>> below{{access_level::read_only, read_only},
                                                                      {access_level::read_write, read_write}};
        for (const auto& [token_level, token] : below) {
            if (token_level >= level) continue;
            auto low = send(c, method, target, token, body);
            EXPECT_EQ(low.status, 403) << where << " with " << api::access_name(token_level);
            EXPECT_EQ(error_of(low), "Insufficient permissions") << where;
        }
    }
    EXPECT_EQ(walked, api::route_table().size());
    EXPECT_GT(guarded, 40u);

    // Nothing the refused requests asked for happened.
    EXPECT_EQ(stored_messages(s.queue), 1);
    EXPECT_EQ(cluster().run_sql("SELECT count(*) FROM queen.queues WHERE name = " + quote(s.created_queue)), "0");
    EXPECT_EQ(cluster().run_sql("SELECT count(*) FROM queen.stream_queries WHERE name = " + quote(s.created_queue)),
              "0");
    EXPECT_EQ(cluster().run_sql("SELECT count(*) FROM queen.message_tombstones WHERE partition_id = " +
                                s.partition_id),
              "0");
    auto flags = send(c, "GET", "/api/v1/system/maintenance", admin);
    ASSERT_EQ(flags.status, 200) << flags.body;
    EXPECT_EQ(flags.json().value("maintenanceMode", true), false) << flags.body;
    EXPECT_EQ(flags.json().value("popMaintenanceMode", true), false) << flags.body;

    // At or above its level every route is admitted (what it answers then is its own business).
    for (const auto& r : api::route_table()) {
        const access_level level = needed(r);
        if (level == access_level::anyone) continue;
        const std::string method(http::bhttp::to_string(r.method));
        const std::string target = target_of(r, s);
        const std::string body = body_of(r, s, false);
        const std::vector<std::pair<access_level, std::string>> at_or_above{
            {access_level::read_only, read_only}, {access_level::read_write, read_write}, {access_level::admin, admin}};
        for (const auto& [token_level, token] : at_or_above) {
            if (token_level < level) continue;
            auto ok = send(c, method, target, token, body);
            EXPECT_TRUE(passes(ok)) << method << " " << r.path << " with " << api::access_name(token_level) << ": "
                                    << ok.status << " " << ok.body;
        }
    }
}

TEST(AuthRouteTable, MetricsNeedAdminOnceTheyLeaveTheSkipList) {
    broker_process b(cluster().conninfo(), {{"JWT_ENABLED", "true"},
                                            {"JWT_SECRET", secret},
                                            {"JWT_SKIP_PATHS", "/health"}});
    auto c = client_of(b);
    const std::string admin = jwt::token("HS256", jwt::claims("ops", "admin"), nullptr, secret);
    const std::string read_write = jwt::token("HS256", jwt::claims("app", "read-write"), nullptr, secret);
    for (const std::string path : {"/metrics", "/metrics/prometheus"}) {
        EXPECT_EQ(send(c, "GET", path, "").status, 401) << path;
        EXPECT_EQ(send(c, "GET", path, read_write).status, 403) << path;
        EXPECT_EQ(send(c, "GET", path, admin).status, 200) << path;
    }
    // The dashboard, its files, the OpenAPI document and OPTIONS stay public.
    EXPECT_EQ(send(c, "GET", "/", "").status, 200);
    EXPECT_EQ(send(c, "GET", "/queues/some-client-route", "").status, 200);
    EXPECT_EQ(send(c, "GET", "/api/v1/openapi.json", "").status, 200);
    EXPECT_EQ(send(c, "OPTIONS", "/api/v1/push", "").status, 204);
    // An unknown API path stays a 404 (the route list is public in openapi.json).
    EXPECT_EQ(send(c, "GET", "/api/v1/no-such-route", "").status, 404);
}

TEST(AuthRouteTable, AuthOffLeavesEveryRouteOpen) {
    auto c = client();
    auto q = unique_name("auth-off");
    auto r = c.post("/api/v1/push", push_body(q, json{{"producerSub", "forged"}}));
    ASSERT_EQ(r.status, 201) << r.body;
    EXPECT_EQ(cluster().run_sql("SELECT coalesce(producer_sub, 'null') FROM queen.messages WHERE queue = " + quote(q)),
              "null");
}

}  // namespace
}  // namespace queen::test
