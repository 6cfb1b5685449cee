// docs/http-api.md's route index lists exactly the routes of the route table (method, path,
// access level), and every page it points to exists: a route added without a line fails here.
#include "api/route_table.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

namespace queen::api {
namespace {

using route_row = std::tuple<std::string, std::string, std::string>;  // method, path, access

std::string trimmed(const std::string& s) {
    const auto first = s.find_first_not_of(" `");
    if (first == std::string::npos) return {};
    return s.substr(first, s.find_last_not_of(" `") - first + 1);
}

// The cells of a Markdown table row ("| a | b |" -> {"a", "b"}).
std::vector<std::string> cells(const std::string& line) {
    std::vector<std::string> out;
    std::stringstream in(line.substr(1));
    std::string cell;
    while (std::getline(in, cell, '|')) out.push_back(trimmed(cell));
    return out;
}

const std::filesystem::path source_dir = QUEEN_SOURCE_DIR;

TEST(RouteIndex, ListsExactlyTheRouteTable) {
    std::ifstream doc(source_dir / "docs/http-api.md");
    ASSERT_TRUE(doc) << "docs/http-api.md is missing";
    std::set<route_row> listed;
    std::set<std::string> pages;
    bool in_index = false;
    for (std::string line; std::getline(doc, line);) {
        if (line.rfind("## ", 0) == 0) in_index = line == "## Every route";
        if (!in_index || line.rfind("| ", 0) != 0) continue;
        const auto row = cells(line);
        if (row.size() < 4 || row[0] == "method" || row[0].find("---") != std::string::npos) continue;
        EXPECT_TRUE(listed.emplace(row[0], row[1], row[2]).second) << "listed twice: " << line;
        std::stringstream docs(row[3]);
        for (std::string page; docs >> page;) {
            if (page.rfind("docs/", 0) != 0) continue;
            page = page.substr(0, page.find(".md") + 3);
            pages.insert(page);
        }
    }
    std::set<route_row> table;
    for (const auto& r : route_table())
        table.emplace(std::string(http::bhttp::to_string(r.method)), std::string(r.path), std::string(access_name(r.access)));
    for (const auto& r : table)
        EXPECT_TRUE(listed.count(r)) << "docs/http-api.md has no line for " << std::get<0>(r) << " " << std::get<1>(r)
                                     << " (" << std::get<2>(r) << ")";
    for (const auto& r : listed)
        EXPECT_TRUE(table.count(r)) << "docs/http-api.md lists " << std::get<0>(r) << " " << std::get<1>(r) << " ("
                                    << std::get<2>(r) << "), which the route table does not have";
    EXPECT_FALSE(pages.empty());
    for (const auto& page : pages) EXPECT_TRUE(std::filesystem::exists(source_dir / page)) << page << " does not exist";
}

}  // namespace
}  // namespace queen::api
