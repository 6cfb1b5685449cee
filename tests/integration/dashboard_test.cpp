// The dashboard's serving rules (docs/dashboard.md) through the real broker: / and any GET
// outside /api, /streams, /metrics, /health and /assets answer the page; assets answer with
// their Content-Type, ETag and a long cache (304 on a matching If-None-Match); API paths never
// fall back to the page; HEAD answers the headers without a body; /health is unaffected.
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <string>

namespace {

using namespace queen::test;

// The first asset path (/assets/...) with this extension that the page references.
std::string asset_in(const std::string& page, const std::string& ext) {
    std::smatch m;
    const std::regex re("/assets/[A-Za-z0-9_.-]+\\." + ext);
    return std::regex_search(page, m, re) ? m.str() : std::string();
}

void expect_page(const http_reply& r) {
    EXPECT_EQ(r.status, 200) << r.body.substr(0, 200);
    EXPECT_EQ(r.headers.at("content-type"), "text/html; charset=utf-8");
    EXPECT_EQ(r.headers.at("cache-control"), "no-cache");
    EXPECT_TRUE(r.has_header("etag"));
    EXPECT_NE(r.body.find("<div id=\"app\"></div>"), std::string::npos);
}

TEST(Dashboard, PageAtTheRootAndAtClientSideRoutes) {
    auto c = client();
    const auto root = c.get("/");
    expect_page(root);
    for (const char* path : {"/queues", "/queues/orders", "/messages/12/abc?x=1", "/groups/g/deep/er/path", "/dlq"}) {
        SCOPED_TRACE(path);
        const auto r = c.get(path);
        expect_page(r);
        EXPECT_EQ(r.body, root.body);
    }
}

TEST(Dashboard, AssetsHaveTheirTypeAndALongCache) {
    auto c = client();
    const std::string page = c.get("/").body;
    const std::string js = asset_in(page, "js"), css = asset_in(page, "css");
    ASSERT_FALSE(js.empty()) << page;
    ASSERT_FALSE(css.empty()) << page;
    const auto script = c.get(js);
    EXPECT_EQ(script.status, 200);
    EXPECT_EQ(script.headers.at("content-type"), "text/javascript; charset=utf-8");
    EXPECT_EQ(script.headers.at("cache-control"), "public, max-age=31536000, immutable");
    EXPECT_GT(script.body.size(), 1000u);
    const auto style = c.get(css);
    EXPECT_EQ(style.status, 200);
    EXPECT_EQ(style.headers.at("content-type"), "text/css; charset=utf-8");

    const auto again = c.request("GET", js, "", {{"If-None-Match", script.headers.at("etag")}});
    EXPECT_EQ(again.status, 304);
    EXPECT_TRUE(again.body.empty());
    EXPECT_EQ(again.headers.at("etag"), script.headers.at("etag"));

    const auto missing = c.get("/assets/no-such-file.js");
    EXPECT_EQ(missing.status, 404);
    EXPECT_EQ(missing.json()["error"], "Asset not found");
}

TEST(Dashboard, ApiPathsNeverFallBackToThePage) {
    auto c = client();
    for (const char* path : {"/api/v1/nope", "/api", "/api/v2/queues", "/streams/v1/nope", "/metrics/nope-dashboard",
                             "/health/nope", "/assets/a/b.js"}) {
        SCOPED_TRACE(path);
        const auto r = c.get(path);
        EXPECT_EQ(r.status, 404);
        EXPECT_EQ(r.headers.at("content-type"), "application/json");
        EXPECT_NE(r.json()["error"].get<std::string>().find("no route for GET"), std::string::npos);
    }
    // Only GET and HEAD fall back: another method on a page path is the router's 404.
    const auto post = c.post("/queues", std::string("{}"));
    EXPECT_EQ(post.status, 404);
    EXPECT_EQ(post.headers.at("content-type"), "application/json");
}

TEST(Dashboard, HeadAnswersHeadersWithoutABody) {
    auto c = client();
    const auto get = c.get("/queues/x");
    const auto head = c.request("HEAD", "/queues/x", "");
    EXPECT_EQ(head.status, 200);
    EXPECT_TRUE(head.body.empty());
    EXPECT_EQ(head.headers.at("content-type"), "text/html; charset=utf-8");
    EXPECT_EQ(head.headers.at("content-length"), std::to_string(get.body.size()));
    // The connection still works after a HEAD (no stray body bytes).
    EXPECT_EQ(c.get("/health").status, 200);
    // HEAD is not a way into a GET with side effects.
    EXPECT_EQ(c.request("HEAD", "/api/v1/pop/queue/" + unique_name("dash"), "").status, 405);
}

TEST(Dashboard, HealthIsUnaffected) {
    auto c = client();
    const auto r = c.get("/health");
    ASSERT_EQ(r.status, 200);
    EXPECT_EQ(r.headers.at("content-type"), "application/json");
    EXPECT_EQ(r.json()["status"], "healthy");
}

}  // namespace
