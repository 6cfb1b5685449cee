// The OpenAPI document is the route table's (api/openapi.cpp): every route is in it with its
// method, path parameters and access level, and every operation in it is a route.
#include "api/openapi.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <string>

namespace {

using nlohmann::json;
using queen::api::route_table;

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// "/a/:b/c" -> "/a/{b}/c"
std::string templated(std::string_view path) {
    std::string out;
    for (std::size_t i = 0; i < path.size(); ++i) {
        if (path[i] == ':') {
            std::size_t end = path.find('/', i);
            if (end == std::string_view::npos) end = path.size();
            out += "{" + std::string(path.substr(i + 1, end - i - 1)) + "}";
            i = end - 1;
        } else {
            out += path[i];
        }
    }
    return out;
}

json document() { return json::parse(queen::api::openapi_document(route_table(), "1.2.3")); }

TEST(OpenApi, EveryRouteIsAnOperationWithItsParametersAndAccessLevel) {
    const json doc = document();
    EXPECT_EQ(doc["openapi"], "3.1.0");
    EXPECT_EQ(doc["info"]["version"], "1.2.3");
    std::set<std::string> ids;
    for (const auto& r : route_table()) {
        const std::string path = templated(r.path), method = lower(std::string(boost::beast::http::to_string(r.method)));
        ASSERT_TRUE(doc["paths"].contains(path)) << path;
        ASSERT_TRUE(doc["paths"][path].contains(method)) << method << " " << path;
        const json& op = doc["paths"][path][method];
        EXPECT_EQ(op["summary"], std::string(r.summary));
        EXPECT_EQ(op["x-queen-access"], std::string(queen::api::access_name(r.access)));
        EXPECT_TRUE(ids.insert(op["operationId"].get<std::string>()).second) << "duplicate " << op["operationId"];
        std::vector<std::string> expected;
        for (std::size_t i = r.path.find(':'); i != std::string_view::npos; i = r.path.find(':', i + 1)) {
            std::size_t end = r.path.find('/', i);
            expected.emplace_back(r.path.substr(i + 1, (end == std::string_view::npos ? r.path.size() : end) - i - 1));
        }
        std::vector<std::string> listed;
        for (const auto& p : op.value("parameters", json::array())) {
            EXPECT_EQ(p["in"], "path");
            EXPECT_EQ(p["required"], true);
            listed.push_back(p["name"]);
        }
        EXPECT_EQ(listed, expected) << path;
        EXPECT_TRUE(op["responses"].contains("default"));
    }
}

TEST(OpenApi, EveryOperationIsARoute) {
    const json doc = document();
    std::set<std::pair<std::string, std::string>> table;
    for (const auto& r : route_table())
        EXPECT_TRUE(table.emplace(lower(std::string(boost::beast::http::to_string(r.method))), templated(r.path)).second)
            << "a route is in the table twice: " << r.path;
    std::size_t operations = 0;
    for (const auto& [path, ops] : doc["paths"].items())
        for (const auto& [method, op] : ops.items()) {
            ++operations;
            EXPECT_TRUE(table.count({method, path})) << method << " " << path << " is not a route";
        }
    EXPECT_EQ(operations, route_table().size());
}

TEST(OpenApi, TheAccessLevelsFollowTheContract) {
    std::map<std::string, std::string> level;
    for (const auto& r : route_table())
        level[std::string(boost::beast::http::to_string(r.method)) + " " + std::string(r.path)] =
            std::string(queen::api::access_name(r.access));
    EXPECT_EQ(level["GET /health"], "public");
    EXPECT_EQ(level["GET /api/v1/openapi.json"], "public");
    EXPECT_EQ(level["GET /api/v1/resources/queues"], "read-only");
    EXPECT_EQ(level["GET /api/v1/consumer-groups/lagging"], "read-only");
    EXPECT_EQ(level["POST /api/v1/push"], "read-write");
    EXPECT_EQ(level["GET /api/v1/pop/queue/:queue"], "read-write");
    EXPECT_EQ(level["POST /api/v1/dlq/requeue"], "read-write");
    EXPECT_EQ(level["DELETE /api/v1/dlq"], "admin");
    EXPECT_EQ(level["DELETE /api/v1/resources/queues/:queue"], "admin");
    EXPECT_EQ(level["POST /api/v1/stats/refresh"], "admin");
    EXPECT_EQ(level["POST /api/v1/system/maintenance"], "admin");
    EXPECT_EQ(level["DELETE /api/v1/consumer-groups/:group"], "admin");
    // Public only while JWT_SKIP_PATHS lists them, as its default does (docs/security.md).
    EXPECT_EQ(level["GET /metrics"], "admin");
    EXPECT_EQ(level["GET /metrics/prometheus"], "admin");
    EXPECT_EQ(level["GET /"], "public");
    EXPECT_EQ(level["GET /assets/:file"], "public");
}

}  // namespace
