// The codec path (docs/architecture.md, the codec layer): the database decides whether segments are
// packed and decoded by plain SQL (stock) or by the queen_ext extension. These tests check
// that the path is reported, that the extension run really takes the accelerated path, that
// installing and dropping the extension keeps every message readable, and that both paths
// give the same answers to the same requests.
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace queen::test {
namespace {

using nlohmann::json;

bool extension_available(const test_cluster& db) {
    return db.run_sql("SELECT count(*) FROM pg_available_extensions WHERE name = 'queen_ext'") == "1";
}

// The extension run must have the extension; the stock run skips what needs it when it is not
// installed in PostgreSQL's directories.
#define REQUIRE_EXTENSION_FILES(db)                                                              \
    do {                                                                                         \
        if (!extension_available(db)) {                                                          \
            if (extension_run()) FAIL() << "queen_ext is not installed (make -f Makefile.pgxs install)"; \
            GTEST_SKIP() << "queen_ext is not installed in PostgreSQL's directories";            \
        }                                                                                        \
    } while (0)

std::vector<json> numbered_payloads(int n, const std::string& tag) {
    std::vector<json> out;
    for (int i = 0; i < n; ++i)
        out.push_back(json{{"tag", tag}, {"n", i}, {"text", "message " + std::to_string(i) + " of a zstd-friendly batch"}});
    return out;
}

// Pops everything of a queue (queue mode) and acks each batch; returns the payloads in order.
std::vector<json> drain(http_client& c, const std::string& queue) {
    std::vector<json> out;
    for (;;) {
        auto r = pop(c, queue, "batch=100&wait=false");
        if (r.status == 204) break;
        EXPECT_EQ(r.status, 200) << r.body;
        if (r.status != 200) break;
        auto body = r.json();
        auto messages = body["messages"];
        for (const auto& m : messages) out.push_back(m["data"]);
        auto last = messages.back();
        auto a = ack(c, last);
        EXPECT_EQ(a["success"], true) << a.dump();
    }
    return out;
}

std::string health_codec_path(http_client& c) {
    auto h = c.get("/health");
    EXPECT_EQ(h.status, 200) << h.body;
    return h.json()["codecPath"].get<std::string>();
}

TEST(CodecPath, HealthAndStoredSegmentsFollowTheDatabase) {
    auto c = client();
    auto q = unique_name("codec-path");
    auto payloads = numbered_payloads(40, q);
    push_payloads(c, q, "p", payloads);

    auto h = c.get("/health").json();
    EXPECT_EQ(h["codecPath"], extension_run() ? "queen_ext" : "sql") << h.dump();
    EXPECT_EQ(h["codec"], extension_run() ? "zstd" : "raw") << h.dump();
    EXPECT_EQ(h["extension"].is_null(), !extension_run()) << h.dump();

    auto codecs = cluster().run_sql(
        "SELECT string_agg(DISTINCT s.codec::text, ',') FROM queen.log_segments s "
        "JOIN queen.log_partitions p ON p.id = s.partition_id JOIN queen.queues q ON q.id = p.queue_id "
        "WHERE q.name = " + quote(q));
    EXPECT_EQ(codecs, extension_run() ? "1" : "0") << "40 similar messages pack into one zstd segment with queen_ext";

    // queen.messages decodes the segment on both paths.
    auto decoded = cluster().run_sql("SELECT string_agg(payload_text, '|' ORDER BY \"offset\") FROM queen.messages "
                                     "WHERE queue = " + quote(q));
    std::string expected;
    for (const auto& p : payloads) expected += (expected.empty() ? "" : "|") + p.dump();
    EXPECT_EQ(decoded, expected);

    EXPECT_EQ(drain(c, q), payloads);
}

// The extension run proves the accelerated path ran: queen_ext's functions were called (by the
// broker's own sessions) and zstd segments are stored.
TEST(CodecPath, ExtensionRunCallsTheExtensionsFunctions) {
    if (!extension_run()) GTEST_SKIP() << "only in the run with queen_ext (QUEEN_TEST_EXTENSION=1)";
    auto c = client();
    auto q = unique_name("codec-proof");
    push_payloads(c, q, "p", numbered_payloads(25, q));
    // A second push of the same transaction ids: dedup probes find them all.
    json items = json::array();
    auto first = cluster().run_sql("SELECT string_agg(transaction_id, ',' ORDER BY \"offset\") FROM queen.messages "
                                   "WHERE queue = " + quote(q));
    std::vector<std::string> txids;
    for (std::size_t pos = 0, next; pos <= first.size(); pos = next + 1) {
        next = first.find(',', pos);
        if (next == std::string::npos) next = first.size();
        txids.push_back(first.substr(pos, next - pos));
    }
    ASSERT_EQ(txids.size(), 25u);
    for (const auto& t : txids) items.push_back(json{{"queue", q}, {"partition", "p"}, {"transactionId", t}, {"payload", 1}});
    auto again = c.post("/api/v1/push", json{{"items", items}});
    ASSERT_EQ(again.status, 201) << again.body;
    for (const auto& r : again.json()) EXPECT_EQ(r["status"], "duplicate") << r.dump();
    EXPECT_EQ(drain(c, q).size(), 25u);

    EXPECT_GT(std::stoi(cluster().run_sql("SELECT count(*) FROM queen.log_segments WHERE codec = 1")), 0);

    // Statistics reach pg_stat_user_functions when the sessions flush them (within ~10 s).
    // Pushes run queen_ext.push (which packs and probes in C); queen.messages decodes.
    const std::set<std::string> wanted{"push", "segment_decode"};
    std::string calls;
    for (int i = 0; i < 300; ++i) {
        cluster().run_sql("SELECT count(*) FROM queen.messages WHERE queue = " + quote(q));  // decodes here too
        calls = cluster().run_sql(
            "SELECT string_agg(funcname || '=' || calls, ',' ORDER BY funcname) FROM pg_stat_user_functions "
            "WHERE schemaname = 'queen_ext' AND calls > 0 AND funcname IN ('push', 'segment_decode')");
        if (std::count(calls.begin(), calls.end(), '=') == static_cast<long>(wanted.size())) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    for (const auto& f : wanted) EXPECT_NE(calls.find(f + "="), std::string::npos) << "calls: " << calls;
}

// Install on a database written by the stock path, write, drop, write again: every message
// stays readable by the broker, and SQL shows what it can decode.
TEST(CodecPath, InstallAndDropKeepEveryMessageReadable) {
    test_cluster db({}, "queen_test", codec_setup::stock);
    REQUIRE_EXTENSION_FILES(db);
    broker_process b(db.conninfo());
    auto c = client_of(b);
    auto q = unique_name("codec-life");
    std::vector<json> all;
    auto raw_part = numbered_payloads(30, "before");
    push_payloads(c, q, "p", raw_part);
    all.insert(all.end(), raw_part.begin(), raw_part.end());
    EXPECT_EQ(health_codec_path(c), "sql");

    // A queue without dedup keeps no transaction ids outside its segments.
    auto nodedup = unique_name("codec-nodedup");
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", nodedup}, {"options", {{"dedupWindowSeconds", 0}}}}).status, 200);

    db.run_sql("CREATE EXTENSION queen_ext");
    EXPECT_EQ(health_codec_path(c), "queen_ext") << "the path is the database's: no broker restart needed";
    auto zstd_part = numbered_payloads(30, "with-extension");
    push_payloads(c, q, "p", zstd_part);
    push_payloads(c, nodedup, "p", zstd_part);
    all.insert(all.end(), zstd_part.begin(), zstd_part.end());
    EXPECT_EQ(db.run_sql("SELECT string_agg(DISTINCT codec, ',') FROM queen.messages WHERE queue = " + quote(q)),
              "raw,zstd");
    EXPECT_EQ(db.run_sql("SELECT count(payload) FROM queen.messages WHERE queue = " + quote(q)), "60")
        << "with the extension, queen.messages decodes raw and zstd segments";

    db.run_sql("DROP EXTENSION queen_ext");  // no CASCADE: nothing depends on it
    EXPECT_EQ(db.run_sql("SELECT count(*) FROM pg_namespace WHERE nspname = 'queen_ext'"), "0");
    EXPECT_EQ(health_codec_path(c), "sql");
    auto after = numbered_payloads(30, "after-drop");
    push_payloads(c, q, "p", after);
    all.insert(all.end(), after.begin(), after.end());

    // SQL shows zstd rows with their codec and NULL payloads rather than hiding them.
    EXPECT_EQ(db.run_sql("SELECT string_agg(codec || ':' || count_payload || '/' || n, ',' ORDER BY codec) FROM ("
                         "SELECT codec, count(payload)::text AS count_payload, count(*)::text AS n FROM queen.messages "
                         "WHERE queue = " + quote(q) + " GROUP BY codec) x"),
              "raw:60/60,zstd:0/30");
    // The broker decodes zstd itself: everything is delivered, in order, acks by transaction id resolve.
    EXPECT_EQ(drain(c, q), all);
    // Acks by transaction id into zstd segments that SQL cannot decode and no dedup row
    // names: the broker places them itself (single acks, and acks inside a transaction).
    auto first = pop(c, nodedup, "batch=10&wait=false");
    ASSERT_EQ(first.status, 200) << first.body;
    auto m = first.json()["messages"][9];
    auto a = ack(c, m);
    EXPECT_EQ(a["success"], true) << a.dump();
    EXPECT_EQ(a["offset"], 10) << a.dump();
    auto second = pop(c, nodedup, "batch=5&wait=false");
    ASSERT_EQ(second.status, 200) << second.body;
    auto m2 = second.json()["messages"][4];
    auto t = c.post("/api/v1/transaction",
                    json{{"operations", json::array({json{{"type", "ack"}, {"transactionId", m2["transactionId"]},
                                                          {"partitionId", m2["partitionId"]}, {"leaseId", m2["leaseId"]}}})}});
    ASSERT_EQ(t.status, 200) << t.body;
    EXPECT_EQ(t.json()["success"], true) << t.body;
    EXPECT_EQ(drain(c, nodedup), std::vector<json>(zstd_part.begin() + 15, zstd_part.end()));
    EXPECT_EQ(db.run_sql("SELECT string_agg(committed::text, ',' ORDER BY committed) FROM queen.log_consumers "
                         "WHERE committed > 0"),
              "30,90");
}

TEST(CodecPath, ExtensionPolicyIsCheckedAtStart) {
    test_cluster db({}, "queen_test", codec_setup::stock);
    REQUIRE_EXTENSION_FILES(db);
    { broker_process schema_writer(db.conninfo()); }
    try {
        broker_process b(db.conninfo(), {{"QUEEN_EXTENSION", "require"}});
        ADD_FAILURE() << "a broker with QUEEN_EXTENSION=require started without the extension";
    } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find("QUEEN_EXTENSION=require but the queen_ext extension is not installed"),
                  std::string::npos)
            << e.what();
    }
    db.run_sql("CREATE EXTENSION queen_ext");
    {
        broker_process b(db.conninfo(), {{"QUEEN_EXTENSION", "require"}});
        EXPECT_NE(b.log().find("codec path: queen_ext"), std::string::npos) << b.log();
        auto c = client_of(b);
        EXPECT_EQ(health_codec_path(c), "queen_ext");
    }
    try {
        broker_process b(db.conninfo(), {{"QUEEN_EXTENSION", "off"}});
        ADD_FAILURE() << "a broker with QUEEN_EXTENSION=off started with the extension installed";
    } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find("DROP EXTENSION queen_ext"), std::string::npos) << e.what();
    }
    try {
        broker_process b(db.conninfo(), {{"QUEEN_EXTENSION", "sometimes"}});
        ADD_FAILURE() << "QUEEN_EXTENSION=sometimes was accepted";
    } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find("QUEEN_EXTENSION must be auto, require (or on) or off"), std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace queen::test
