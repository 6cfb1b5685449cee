// Upgrade in place (issue 12): a database written by the schema of the release before the
// held-snapshot storage changes (tests/fixtures/sql-before-issue-12, the sql/ tree of that
// release) is migrated by this broker without losing or reordering a message and without
// moving any group's cursor, lease or attempt counter; dedup rows and dead letters still count.
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace queen::test {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::vector<fs::path> sql_files(const fs::path& dir) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".sql") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    return files;
}

// Applies a sql/ tree as that release's broker did at boot: the migrations in order, each
// recorded in queen.schema_version, then every procedure file.
void apply_old_schema(const test_cluster& db, const fs::path& root) {
    db.run_sql("SET client_min_messages = warning; CREATE SCHEMA IF NOT EXISTS queen; "
               "CREATE TABLE IF NOT EXISTS queen.schema_version ("
               "version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())");
    for (const auto& f : sql_files(root / "migrations")) {
        const auto name = f.filename().string();
        db.run_sql("SET client_min_messages = warning; BEGIN; " + read_file(f) + "; INSERT INTO queen.schema_version (version, name) VALUES (" +
                   std::to_string(std::stoi(name.substr(0, 4))) + ", " + quote(name) + "); COMMIT");
    }
    for (const auto& f : sql_files(root / "procedures")) db.run_sql("SET client_min_messages = warning; " + read_file(f));
}

// Everything about the cursors that an upgrade must keep, one line per cursor.
const char* const cursors_sql =
    "SELECT string_agg(format('%s/%s committed=%s lease=%s end=%s expires=%s counted=%s attempts=%s@%s retry=%s "
    "ready=%s', p.name, lc.consumer_group, lc.committed, lc.lease_id, lc.lease_end, lc.lease_expires_at, "
    "lc.lease_counted, lc.attempts, lc.attempts_offset, lc.retry_at, lc.ready_at), E'\\n' "
    "ORDER BY p.name, lc.consumer_group) "
    "FROM queen.log_consumers lc JOIN queen.log_partitions p ON p.id = lc.partition_id";
const char* const segments_sql =
    "SELECT md5(string_agg(format('%s %s %s %s %s %s', partition_id, first_offset, last_offset, codec, created_at, "
    "md5(body)), ',' ORDER BY partition_id, first_offset)) FROM queen.log_segments";
const char* const dedup_sql =
    "SELECT count(*) || ' ' || md5(string_agg(format('%s %s %s', partition_id, transaction_id, msg_offset), ',' "
    "ORDER BY partition_id, transaction_id)) FROM queen.log_dedup";
const char* const dead_letters_sql =
    "SELECT string_agg(format('%s %s %s %s', partition_id, msg_offset, consumer_group, transaction_id), ',' "
    "ORDER BY id) FROM queen.dead_letters";

std::string text_array(const std::string& prefix, int from, int to) {
    std::string s = "ARRAY[";
    for (int i = from; i <= to; ++i) s += (i > from ? ",'" : "'") + prefix + std::to_string(i) + "'";
    return s + "]";
}

TEST(Upgrade, DatabaseOfTheReleaseBeforeHeldSnapshotsKeepsEveryMessageCursorAndLease) {
    test_cluster db({}, "queen_upgrade", codec_setup::stock);
    apply_old_schema(db, fs::path(QUEEN_FIXTURES_DIR) / "sql-before-issue-12");
    ASSERT_EQ(db.run_sql("SELECT max(version) FROM queen.schema_version"), "12");

    // The old schema's own functions write the data: 10, 5 and 3 messages in A, B and C.
    db.run_sql("SELECT queen.configure('up', NULL, NULL, '{\"retryLimit\": 0, \"leaseTime\": 600}'::jsonb)");
    std::string txids = "ARRAY[]::text[] || " + text_array("a", 1, 10) + " || " + text_array("b", 1, 5) + " || " +
                        text_array("c", 1, 3);
    std::string payloads = "(SELECT array_agg(format('{\"n\": %s}', g)) FROM generate_series(1, 18) g)";
    db.run_sql("SELECT count(*) FROM queen.push(ARRAY['up','up','up'], ARRAY['A','B','C'], ARRAY[10,5,3], " + txids +
               ", array_fill(NULL::uuid, ARRAY[18]), array_fill(NULL::text, ARRAY[18]), " + payloads + ")");
    auto pid = [&](const std::string& part) {
        return db.run_sql("SELECT id FROM queen.log_partitions WHERE name = " + quote(part));
    };
    auto ack_sql = [&](const std::string& group, const std::string& part, const std::string& txid,
                       const std::string& status) {
        return db.run_sql("SELECT bool_and(success)::text FROM queen.ack(" + quote(group) + ", ARRAY[" + pid(part) +
                          "]::bigint[], ARRAY[" + quote(txid) + "], ARRAY[NULL]::bigint[], ARRAY[NULL]::uuid[], ARRAY[" +
                          quote(status) + "], ARRAY[NULL]::text[])");
    };
    // g1: a lease over A's first four, two of them acknowledged (committed 2, lease live).
    db.run_sql("SELECT count(*) FROM queen.pop('up', 'A', 'g1', 4, 1, false, true, NULL)");
    ASSERT_EQ(ack_sql("g1", "A", "a1", "completed"), "true");
    ASSERT_EQ(ack_sql("g1", "A", "a2", "completed"), "true");
    // g2: everything, auto-acknowledged.
    db.run_sql("SELECT count(*) FROM queen.pop('up', NULL, 'g2', 100, 3, true, true, NULL)");
    // g3: c1 fails with no retries left: a dead letter, the cursor past it.
    db.run_sql("SELECT count(*) FROM queen.pop('up', 'C', 'g3', 1, 1, false, true, NULL)");
    ASSERT_EQ(ack_sql("g3", "C", "c1", "failed"), "true");
    // Queue mode: a live lease over B's first two.
    db.run_sql("SELECT count(*) FROM queen.pop('up', 'B', '__QUEUE_MODE__', 2, 1, false, true, NULL)");

    const auto cursors = db.run_sql(cursors_sql), segments = db.run_sql(segments_sql), dedup = db.run_sql(dedup_sql),
               dead = db.run_sql(dead_letters_sql);
    const auto g1_lease = db.run_sql("SELECT lease_id FROM queen.log_consumers WHERE consumer_group = 'g1' AND "
                                     "partition_id = " + pid("A"));
    ASSERT_FALSE(g1_lease.empty());
    ASSERT_EQ(dead, pid("C") + " 1 g3 c1");

    broker_process b(db.conninfo());
    auto c = client_of(b);
    EXPECT_EQ(db.run_sql("SELECT max(version) || ' ' || count(*) FROM queen.schema_version"),
              db.run_sql("SELECT count(*) || ' ' || count(*) FROM queen.schema_version"));
    EXPECT_GT(std::stoi(db.run_sql("SELECT max(version) FROM queen.schema_version")), 12);
    // Nothing moved.
    EXPECT_EQ(db.run_sql(cursors_sql), cursors);
    EXPECT_EQ(db.run_sql(segments_sql), segments);
    EXPECT_EQ(db.run_sql(dedup_sql), dedup);
    EXPECT_EQ(db.run_sql(dead_letters_sql), dead);
    EXPECT_EQ(db.run_sql("SELECT count(*) FROM queen.log_cursor_keys"), db.run_sql("SELECT count(*) FROM queen.log_consumers"));

    // g1's lease still holds: its remaining two acknowledge under it, then A continues in order.
    for (const char* txid : {"a3", "a4"}) {
        auto r = ack(c, json{{"transactionId", txid}, {"partitionId", pid("A")}, {"leaseId", g1_lease}}, "completed", "g1");
        EXPECT_EQ(r["success"], true) << r.dump();
    }
    auto rest = pop(c, "up", "batch=100&consumerGroup=g1", "A");
    ASSERT_EQ(rest.status, 200) << rest.body;
    auto msgs = rest.json()["messages"];
    ASSERT_EQ(msgs.size(), 6u);
    for (std::size_t i = 0; i < msgs.size(); ++i) {
        EXPECT_EQ(msgs[i]["transactionId"], "a" + std::to_string(i + 5));
        EXPECT_EQ(msgs[i]["id"], db.run_sql("SELECT queen.message_id(" + pid("A") + ", " + std::to_string(i + 5) + ")"));
    }
    // g2 consumed everything; queue mode's lease on B still holds (B's rest is claimable after it).
    EXPECT_EQ(pop(c, "up", "consumerGroup=g2").status, 204);
    auto qm = pop(c, "up", "batch=10", "B");
    EXPECT_EQ(qm.status, 204) << qm.body;
    // g3 continues after its dead letter, which the dead-letter route still lists.
    auto g3 = pop(c, "up", "batch=10&consumerGroup=g3", "C");
    ASSERT_EQ(g3.status, 200) << g3.body;
    ASSERT_EQ(g3.json()["messages"].size(), 2u);
    EXPECT_EQ(g3.json()["messages"][0]["transactionId"], "c2");
    auto dlq = c.get("/api/v1/dlq?queue=up");
    ASSERT_EQ(dlq.status, 200) << dlq.body;
    ASSERT_EQ(dlq.json()["messages"].size(), 1u) << dlq.body;
    EXPECT_EQ(dlq.json()["messages"][0]["transactionId"], "c1");
    // The old dedup rows still answer: a1 again is a duplicate of the stored a1.
    auto dup = c.post("/api/v1/push",
                      json{{"items", json::array({json{{"queue", "up"}, {"partition", "A"}, {"transactionId", "a1"},
                                                       {"payload", json{{"n", 99}}}}})}});
    ASSERT_EQ(dup.status, 201) << dup.body;
    EXPECT_EQ(dup.json()[0]["status"], "duplicate") << dup.body;
    EXPECT_EQ(db.run_sql("SELECT queen.partition_last_offset(" + pid("A") + ")"), "10");
}

}  // namespace
}  // namespace queen::test
