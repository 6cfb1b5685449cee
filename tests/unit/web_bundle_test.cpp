// The embedded dashboard (cmake/embed_web.cmake): web/dist's page and the assets it names are
// in the bundle, byte for byte, sorted for lookup, each with a distinct ETag; content types
// follow the extension.
#include "web/web_bundle.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace queen::web {
namespace {

std::string read_dist(const std::string& path) {
    std::ifstream in(std::string(QUEEN_SOURCE_DIR) + "/web/dist/" + path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(WebBundle, ThePageAndTheAssetsItNamesAreEmbeddedVerbatim) {
    const web_file* page = find_web_file("index.html");
    ASSERT_NE(page, nullptr);
    EXPECT_EQ(page->body, read_dist("index.html"));
    const std::string html(page->body);
    const std::regex asset("/assets/([A-Za-z0-9_.-]+)");
    int named = 0;
    for (auto it = std::sregex_iterator(html.begin(), html.end(), asset); it != std::sregex_iterator(); ++it) {
        const std::string path = "assets/" + (*it)[1].str();
        const web_file* f = find_web_file(path);
        ASSERT_NE(f, nullptr) << path;
        EXPECT_EQ(f->body, read_dist(path)) << path;
        ++named;
    }
    EXPECT_GE(named, 2);  // a script and a stylesheet
}

TEST(WebBundle, SortedWithDistinctQuotedETags) {
    const auto files = embedded_web_files();
    std::set<std::string_view> tags;
    for (std::size_t i = 0; i < files.size(); ++i) {
        if (i > 0) {
            EXPECT_LT(files[i - 1].path, files[i].path);
        }
        EXPECT_EQ(files[i].etag.front(), '"');
        EXPECT_EQ(files[i].etag.back(), '"');
        EXPECT_TRUE(tags.insert(files[i].etag).second) << files[i].path;
        EXPECT_EQ(find_web_file(files[i].path), &files[i]);
    }
    EXPECT_EQ(find_web_file("assets/none.js"), nullptr);
    EXPECT_EQ(find_web_file(""), nullptr);
}

TEST(WebBundle, ContentTypeFollowsTheExtension) {
    EXPECT_EQ(content_type_of("index.html"), "text/html; charset=utf-8");
    EXPECT_EQ(content_type_of("assets/main-AB12.js"), "text/javascript; charset=utf-8");
    EXPECT_EQ(content_type_of("assets/main-AB12.css"), "text/css; charset=utf-8");
    EXPECT_EQ(content_type_of("assets/logo.svg"), "image/svg+xml");
    EXPECT_EQ(content_type_of("assets/blob"), "application/octet-stream");
    EXPECT_EQ(content_type_of("js"), "application/octet-stream");
}

}  // namespace
}  // namespace queen::web
