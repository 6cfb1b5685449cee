#include "schema/shard_proxy_installer.hpp"

#include "db/conninfo.hpp"
#include "db/sync_connection.hpp"
#include "schema/migrator.hpp"
#include "schema/sql_bundle.hpp"
#include "store/shard_move_store.hpp"

#include <stdexcept>
#include <vector>

namespace queen::schema {

namespace {

// The mark of a procedure file both sides share (the partition hash, a push's argument rules):
// the proxy hashes partitions and refuses arguments exactly as the shards do.
constexpr std::string_view shared_mark = "\n-- Applied to a shard proxy too.\n";

// An array literal of connection strings (each quoted, backslashes and quotes escaped).
std::string text_array(const std::vector<std::string>& items) {
    std::string out = "{";
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out += ',';
        out += '"';
        for (char c : items[i]) {
            if (c == '"' || c == '\\') out += '\\';
            out += c;
        }
        out += '"';
    }
    return out + "}";
}

// CREATE EXTENSION queen_ext on a shard when this PostgreSQL has it; whether it is there after.
bool install_extension_if_available(db::sync_connection& c) {
    auto available = c.exec("SELECT 1 FROM pg_available_extensions WHERE name = 'queen_ext'", "looking for queen_ext");
    if (available.rows() == 0) return false;
    c.exec("SET client_min_messages = warning", "setting client_min_messages");
    c.exec("CREATE EXTENSION IF NOT EXISTS queen_ext", "creating extension queen_ext");
    return true;
}

// The logical shards shard `index` of `count` hosts: every one whose number is index mod count
// (queen_proxy.configure_cluster maps them the same way).
std::string hosted_array(std::size_t index, std::size_t count, int logical_shards) {
    std::string out = "{";
    for (int s = 0; s < logical_shards; ++s)
        if (static_cast<std::size_t>(s) % count == index) out += (out.size() > 1 ? "," : "") + std::to_string(s);
    return out + "}";
}

// No shard may be the proxy database (under another connection string) or another proxy:
// init would make a proxy a shard and its functions would be replaced.
void check_no_shard_is_a_proxy(const shard_layout& layout, std::chrono::milliseconds connect_wait) {
    auto proxy = db::sync_connection::connect_with_retry(layout.proxy, connect_wait);
    const auto mark = mark_session(proxy);
    for (std::size_t i = 0; i < layout.shards.size(); ++i) {
        auto c = db::sync_connection::connect_with_retry(layout.shards[i], connect_wait);
        if (sees_session(c, mark))
            throw std::invalid_argument("shard " + layout.shards[i] + " is the proxy database " + layout.proxy);
        if (read_database_kind(c).proxy)
            throw std::invalid_argument("shard " + layout.shards[i] +
                                        " is a proxy database (it has the cluster queen_shards)");
    }
}

// The logical shards each of `shards` hosts: those the proxy's cluster maps to it once the
// cluster exists (moves may have changed the first layout), else every one whose number is
// its index mod count (queen_proxy.configure_cluster maps them the same way).
std::vector<std::string> hosted_arrays(const shard_layout& layout, std::chrono::milliseconds connect_wait) {
    std::vector<std::string> mapping;
    if (is_shard_proxy(layout.proxy, connect_wait)) {
        auto proxy = db::sync_connection::connect_with_retry(layout.proxy, connect_wait);
        mapping = store::read_shard_mapping(proxy);
    }
    std::vector<std::string> out;
    for (std::size_t i = 0; i < layout.shards.size(); ++i) {
        if (mapping.empty()) {
            out.push_back(hosted_array(i, layout.shards.size(), layout.logical_shards));
            continue;
        }
        const std::string keyword = db::keyword_conninfo(layout.shards[i]);
        std::string hosted = "{";
        for (std::size_t s = 0; s < mapping.size(); ++s)
            if (mapping[s] == keyword) hosted += (hosted.size() > 1 ? "," : "") + std::to_string(s);
        if (hosted.size() == 1)
            throw std::runtime_error("shard " + layout.shards[i] +
                                     " hosts no logical shard of the proxy's cluster (init takes the databases "
                                     "`queen shards status` lists)");
        out.push_back(hosted + "}");
    }
    return out;
}

void prepare_shard(const shard_layout& layout, std::size_t index, const std::string& hosted,
                   std::chrono::milliseconds connect_wait, shard_install_report& report) {
    const std::string& conninfo = layout.shards[index];
    report.extension.push_back(prepare_shard_schema(conninfo, connect_wait));
    auto c = db::sync_connection::connect_with_retry(conninfo, connect_wait);
    c.exec("SELECT queen.become_shard($1::integer, $2::integer[])", "making the database a shard",
           {std::to_string(layout.logical_shards), hosted});
}

int prepare_proxy(const shard_layout& layout, std::chrono::milliseconds connect_wait) {
    auto c = db::sync_connection::connect_with_retry(layout.proxy, connect_wait);
    c.exec("SET client_min_messages = warning", "setting client_min_messages");
    // The hand-written functions call generated ones, which exist only after generate_api().
    c.exec("SET check_function_bodies = off", "setting check_function_bodies");
    c.exec("BEGIN", "BEGIN");
    try {
        for (const auto& f : embedded_shard_proxy()) c.exec(std::string(f.text), "proxy " + std::string(f.name));
        for (const auto& f : embedded_procedures())
            if (f.text.find(shared_mark) != std::string_view::npos)
                c.exec(std::string(f.text), "proxy " + std::string(f.name));
        // PL/Proxy appends parameters to a cluster's connection strings: they must be key=value.
        std::vector<std::string> keyword_shards;
        for (const auto& s : layout.shards) keyword_shards.push_back(db::keyword_conninfo(s));
        c.exec("SELECT queen_proxy.configure_cluster($1::text[], $2::integer)", "configuring the cluster",
               {text_array(keyword_shards), std::to_string(layout.logical_shards)});
        c.exec("COMMIT", "COMMIT");
    } catch (...) {
        c.exec_ignoring_failure("ROLLBACK");
        throw;
    }
    // Generated in its own transaction: it reads the first shard through the cluster just made.
    auto res = c.exec("SELECT queen_proxy.generate_api($1::jsonb)", "generating the proxy's functions",
                      {std::string(embedded_operation_catalogue())});
    return std::stoi(std::string(res.text(0, 0)));
}

}  // namespace

shard_install_report install_shards(const shard_layout& layout, std::chrono::milliseconds connect_wait) {
    if (layout.shards.empty()) throw std::runtime_error("at least one --shard is needed");
    check_no_shard_is_a_proxy(layout, connect_wait);
    shard_install_report report;
    const auto hosted = hosted_arrays(layout, connect_wait);
    for (std::size_t i = 0; i < layout.shards.size(); ++i) {
        try {
            prepare_shard(layout, i, hosted[i], connect_wait, report);
        } catch (const std::exception& e) {
            throw std::runtime_error("shard " + layout.shards[i] + ": " + e.what());
        }
    }
    try {
        report.functions = prepare_proxy(layout, connect_wait);
    } catch (const std::exception& e) {
        throw std::runtime_error("proxy " + layout.proxy + ": " + e.what());
    }
    return report;
}

bool prepare_shard_schema(const std::string& conninfo, std::chrono::milliseconds connect_wait) {
    apply(conninfo, connect_wait);
    auto c = db::sync_connection::connect_with_retry(conninfo, connect_wait);
    return install_extension_if_available(c);
}

bool is_shard_proxy(const std::string& conninfo, std::chrono::milliseconds connect_wait) {
    auto c = db::sync_connection::connect_with_retry(conninfo, connect_wait);
    auto res = c.exec("SELECT to_regprocedure('queen.shard_databases()') IS NOT NULL", "looking for a shard proxy");
    return res.rows() == 1 && res.text(0, 0) == "t";
}

database_kind read_database_kind(db::sync_connection& database) {
    auto res = database.exec(
        "SELECT EXISTS (SELECT 1 FROM pg_foreign_server WHERE srvname = 'queen_shards') "
        "OR to_regprocedure('queen.shard_databases()') IS NOT NULL, "
        "to_regprocedure('queen.shard_hosting()') IS NOT NULL, to_regclass('queen.queues') IS NOT NULL",
        "reading what the database is");
    database_kind out;
    out.proxy = res.text(0, 0) == "t";
    if (out.proxy) return out;
    if (res.text(0, 1) == "t") out.shard = store::read_shard_hosting(database);
    if (res.text(0, 2) == "t")
        out.holds_queues =
            database.exec("SELECT EXISTS (SELECT 1 FROM queen.queues)", "looking for queues").text(0, 0) == "t";
    return out;
}

session_mark mark_session(db::sync_connection& c) {
    auto res = c.exec(
        "SELECT pg_backend_pid()::text, coalesce(backend_start::text, '') FROM pg_stat_activity "
        "WHERE pid = pg_backend_pid()",
        "reading the session");
    return {std::string(res.text(0, 0)), std::string(res.text(0, 1))};
}

bool sees_session(db::sync_connection& c, const session_mark& mark) {
    // Another role's backend_start may be hidden (NULL): then the pid and the database decide.
    auto res = c.exec(
        "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1::integer AND datname = current_database() "
        "AND (backend_start IS NULL OR backend_start = coalesce(NULLIF($2::text, '')::timestamptz, backend_start)))",
        "looking for a session", {mark.pid, mark.backend_start});
    return res.text(0, 0) == "t";
}

}  // namespace queen::schema
