// GET /api/v1/openapi.json through the real broker: every operation it lists is a route the
// broker serves (a request to it never meets the router's own 404 or 405), and it lists as
// many operations as the route table has.
#include "api/route_table.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <regex>

namespace queen::test {
namespace {

using nlohmann::json;

TEST(OpenApi, EveryDocumentedOperationIsServed) {
    auto c = client();
    auto r = c.get("/api/v1/openapi.json");
    ASSERT_EQ(r.status, 200) << r.body;
    const json doc = r.json();
    EXPECT_EQ(doc["openapi"], "3.1.0");
    std::size_t operations = 0;
    const std::regex param(R"(\{[^}]+\})");
    for (const auto& [path, ops] : doc["paths"].items()) {
        // Placeholders no test uses: a handler answers for them (often 404 for the resource, 400
        // for the missing body), and changes nothing.
        const std::string target = std::regex_replace(path, param, unique_name("openapi"));
        for (const auto& [method, op] : ops.items()) {
            ++operations;
            std::string m = method;
            for (auto& ch : m) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
            auto reply = c.request(m, target, m == "GET" || m == "DELETE" ? std::string() : std::string("{}"),
                                   {{"Content-Type", "application/json"}});
            SCOPED_TRACE(m + " " + target + " -> " + std::to_string(reply.status) + " " + reply.body.substr(0, 200));
            EXPECT_NE(reply.status, 405);
            EXPECT_EQ(reply.body.find("no route for"), std::string::npos);
            EXPECT_LT(reply.status, 500);
        }
    }
    EXPECT_EQ(operations, api::route_table().size());
}

}  // namespace
}  // namespace queen::test
