// docs/http-api.md's route index lists exactly the routes of the route table (method, path,
// access level), its SQL column exactly the operations sql/operations.json says each route
// calls, and every page it points to exists: a route added without a line fails here.
#include "api/route_table.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

namespace queen::api {
namespace {

using route_row = std::tuple<std::string, std::string, std::string>;  // method, path, access
using route_sql = std::map<std::string, std::set<std::string>>;           // "METHOD path" -> queen.* names

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

// The rows of docs/http-api.md's "Every route" table, header and rule left out.
std::vector<std::vector<std::string>> index_rows() {
    std::ifstream doc(source_dir / "docs/http-api.md");
    std::vector<std::vector<std::string>> out;
    bool in_index = false;
    for (std::string line; std::getline(doc, line);) {
        if (line.rfind("## ", 0) == 0) in_index = line == "## Every route";
        if (!in_index || line.rfind("| ", 0) != 0) continue;
        auto row = cells(line);
        if (row.size() < 5 || row[0] == "method" || row[0].find("---") != std::string::npos) continue;
        out.push_back(std::move(row));
    }
    return out;
}

// The names of an SQL cell ("`queen.a`, `queen.b`", or "—" for none).
std::set<std::string> sql_names(const std::string& cell) {
    std::set<std::string> out;
    std::stringstream in(cell);
    for (std::string name; std::getline(in, name, ',');) {
        name.erase(std::remove(name.begin(), name.end(), '`'), name.end());
        name = trimmed(name);
        if (!name.empty() && name != "—") out.insert(name);
    }
    return out;
}

TEST(RouteIndex, ListsExactlyTheRouteTable) {
    ASSERT_TRUE(std::filesystem::exists(source_dir / "docs/http-api.md")) << "docs/http-api.md is missing";
    std::set<route_row> listed;
    std::set<std::string> pages;
    for (const auto& row : index_rows()) {
        EXPECT_TRUE(listed.emplace(row[0], row[1], row[2]).second) << "listed twice: " << row[0] << " " << row[1];
        std::stringstream docs(row[4]);
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

TEST(RouteIndex, SqlColumnIsTheOperationCatalogues) {
    std::ifstream file(source_dir / "sql/operations.json");
    ASSERT_TRUE(file) << "sql/operations.json is missing";
    const auto catalogue = nlohmann::json::parse(file);
    route_sql catalogued;
    for (const auto& op : catalogue.at("operations"))
        for (const auto& route : op.at("routes")) catalogued[route.get<std::string>()].insert(op.at("function"));
    route_sql listed;
    for (const auto& row : index_rows()) listed[row[0] + " " + row[1]] = sql_names(row[3]);
    for (const auto& [route, names] : listed) {
        const auto it = catalogued.find(route);
        const std::set<std::string> expected = it == catalogued.end() ? std::set<std::string>{} : it->second;
        for (const auto& name : names)
            EXPECT_TRUE(expected.count(name)) << "docs/http-api.md says " << route << " calls " << name
                                              << ", which sql/operations.json does not list for it";
        for (const auto& name : expected)
            EXPECT_TRUE(names.count(name)) << "sql/operations.json says " << route << " calls " << name
                                           << ", which docs/http-api.md's SQL column does not list";
    }
    for (const auto& [route, names] : catalogued)
        EXPECT_TRUE(listed.count(route)) << "sql/operations.json names the route " << route
                                         << ", which docs/http-api.md's index does not list";
}

}  // namespace
}  // namespace queen::api
