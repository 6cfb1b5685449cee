// Hostile operations on a sharded deployment (docs/scaling.md, docs/tenancy.md): a move whose
// target is a proxy or a database of the deployment in another role is refused with nothing
// changed; `queen shards` never prints a password; a tenant's role on a shard sees only its own
// receipts. Run as their own suite (scripts/run-tests.sh).
#include "sharded_deployment.hpp"
#include "shell_command.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <set>

namespace queen::test {
namespace {

using nlohmann::json;

constexpr int logical_shards = 16;  // init's default
constexpr std::size_t databases = 4;

int logical_shard_of(const sharded_deployment& d, const std::string& queue, const std::string& partition) {
    return std::stoi(d.a.run_sql("SELECT queen.partition_hash(" + quote(queue) + ", " + quote(partition) + ") & " +
                                 std::to_string(logical_shards - 1)));
}

// One partition name of `queue` per logical shard, by logical shard.
std::vector<std::string> partition_per_shard(const sharded_deployment& d, const std::string& queue) {
    std::vector<std::string> out(logical_shards);
    std::size_t found = 0;
    for (int i = 0; found < out.size(); ++i) {
        const std::string name = "p" + std::to_string(i);
        auto& slot = out[static_cast<std::size_t>(logical_shard_of(d, queue, name))];
        if (slot.empty()) {
            slot = name;
            ++found;
        }
    }
    return out;
}

// What a move could change: the proxy's mapping, its PL/Proxy functions, whether it became a
// shard, the fences and moves recorded, and what each shard hosts.
std::string deployment_state(const sharded_deployment& d) {
    std::string out =
        d.a.run_sql("SELECT string_agg(conninfo, '|' ORDER BY logical_shard) FROM queen.shard_databases()");
    out += "\nplproxy functions: " +
           d.a.run_sql(
               "SELECT count(*) FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE l.lanname = "
               "'plproxy'");
    out += "\nproxy is a shard: " + d.a.run_sql("SELECT to_regclass('queen.shard_identity') IS NOT NULL");
    out += "\nmoves: " + d.a.run_sql("SELECT count(*) FROM queen_proxy.shard_moves");
    for (std::size_t i = 0; i < databases; ++i)
        out += "\nshard " + std::to_string(i) + ": " +
               d.on_shard(i, "SELECT hosted::text || ' fenced ' || fenced::text FROM queen.shard_identity");
    return out;
}

std::string move_command(const sharded_deployment& d, int shard, const std::string& target) {
    return shards_command("move " + std::to_string(shard) + " --proxy " + shell_quoted(d.a.conninfo()) + " --to " +
                          shell_quoted(target));
}

// Pushes one message to each logical shard's partition and pops it back: every shard serves.
void every_shard_serves(http_client& c, const std::string& queue, const std::vector<std::string>& partitions,
                        int round) {
    for (std::size_t s = 0; s < partitions.size(); ++s) {
        const auto pushed = push_payloads(c, queue, partitions[s], {json{{"round", round}, {"shard", s}}});
        ASSERT_EQ(pushed[0].value("status", ""), "queued") << "logical shard " << s << ": " << pushed.dump();
    }
    for (std::size_t s = 0; s < partitions.size(); ++s) {
        const auto popped = pop(c, queue, "batch=10&wait=false&autoAck=true", partitions[s]);
        ASSERT_EQ(popped.status, 200) << "logical shard " << s << ": " << popped.body;
        const json messages = json::parse(popped.body)["messages"];
        ASSERT_EQ(messages.size(), 1u) << popped.body;
        EXPECT_EQ(messages[0]["data"]["round"], round);
        EXPECT_EQ(messages[0]["data"]["shard"], s);
    }
}

TEST(ShardsHostile, AMoveToAProxyOrADatabaseOfTheDeploymentInAnotherRoleIsRefusedAndChangesNothing) {
    sharded_deployment d;
    d.init();
    broker_process b(d.a.conninfo());
    auto c = client_of(b);
    configure_queue(c, "hm");
    const auto partitions = partition_per_shard(d, "hm");
    every_shard_serves(c, "hm", partitions, 1);
    const int shard = logical_shard_of(d, "hm", partitions[5]);
    const std::size_t source = static_cast<std::size_t>(shard) % databases;
    const std::size_t other = (source + 1) % databases;
    const std::string before = deployment_state(d);

    // A second proxy over the same shards, not named by the move.
    d.a.run_sql("CREATE DATABASE proxy2");
    std::string init_second = "init --proxy " + shell_quoted(d.a.conninfo_for("proxy2"));
    for (const auto& database : d.shards) init_second += " --shard " + shell_quoted(database);
    ASSERT_EQ(run_shell(shards_command(init_second)).status, 0);
    // An unsharded broker's database with a queue.
    d.b.run_sql("CREATE DATABASE plain");
    {
        broker_process plain(d.b.conninfo_for("plain"));
        auto pc = client_of(plain);
        push_payloads(pc, "kept", "", {json{{"n", 1}}});
    }

    const std::string alias = " application_name=alias";
    const struct {
        std::string target, expected;
    } cases[] = {
        {d.a.conninfo(), "is the proxy database"},
        {d.a.conninfo() + alias, "is the proxy database"},
        {d.a.conninfo_for("proxy2"), "is a proxy database (it has the cluster queen_shards)"},
        {d.shards[other] + (other == 3 ? "&application_name=alias" : alias), "is the database the proxies name"},
        {d.shards[source] + (source == 3 ? "&application_name=alias" : alias),
         "which holds logical shard " + std::to_string(shard) + " already"},
        {d.b.conninfo_for("plain"), "holds queues and is no shard"},
    };
    for (const auto& k : cases) {
        const auto r = run_shell(move_command(d, shard, k.target));
        EXPECT_EQ(r.status, 1) << k.target << "\n" << r.out;
        EXPECT_NE(r.out.find(k.expected), std::string::npos) << k.target << "\n" << r.out;
        EXPECT_EQ(deployment_state(d), before) << k.target;
    }
    EXPECT_EQ(d.b.run_sql_in("plain",
                             "SELECT to_regclass('queen.shard_identity') IS NULL OR "
                             "NOT EXISTS (SELECT 1 FROM queen.shard_identity)"),
              "t");
    EXPECT_EQ(d.b.run_sql_in("plain", "SELECT count(*) FROM queen.messages WHERE queue = 'kept'"), "1");
    // Every logical shard still takes pushes and serves pops through the proxy.
    every_shard_serves(c, "hm", partitions, 2);
}

TEST(ShardsHostile, InitRefusesTheProxyAsAShardAndChangesNothing) {
    sharded_deployment d;
    const std::string init = "init --proxy " + shell_quoted(d.a.conninfo()) + " --shard " + shell_quoted(d.shards[0]) +
                             " --shard " + shell_quoted(d.a.conninfo() + " application_name=alias");
    const auto r = run_shell(shards_command(init));
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("application_name=alias is the proxy database"), std::string::npos) << r.out;
    EXPECT_EQ(d.a.run_sql("SELECT to_regclass('queen.queues') IS NULL AND NOT EXISTS (SELECT 1 FROM "
                          "pg_foreign_server WHERE srvname = 'queen_shards')"),
              "t");
    EXPECT_EQ(d.on_shard(0, "SELECT to_regclass('queen.queues') IS NULL"), "t");
}

TEST(ShardsHostile, ShardCommandsNeverPrintAPasswordAndInitWarnsOfOne) {
    sharded_deployment d;
    const std::string secret = "hunter2-secret";
    d.shards[0] += " password=" + secret;
    d.shards[3] = "postgresql://postgres:" + secret + "@127.0.0.1:" + std::to_string(d.b.port()) + "/shard3";
    const auto init = run_shell(shards_command(d.init_arguments()));
    ASSERT_EQ(init.status, 0) << init.out;
    EXPECT_EQ(init.out.find(secret), std::string::npos) << init.out;
    EXPECT_NE(init.out.find("warning: shard 0"), std::string::npos) << init.out;
    EXPECT_NE(init.out.find("warning: shard 3"), std::string::npos) << init.out;
    EXPECT_EQ(init.out.find("warning: shard 1"), std::string::npos) << init.out;
    EXPECT_NE(init.out.find("password=***"), std::string::npos) << init.out;

    // Another list: the proxy's refusal quotes the cluster it has, passwords and all.
    std::string fewer = "init --proxy " + shell_quoted(d.a.conninfo());
    for (std::size_t i = 0; i < 3; ++i) fewer += " --shard " + shell_quoted(d.shards[i]);
    const auto refused = run_shell(shards_command(fewer));
    EXPECT_NE(refused.status, 0) << refused.out;
    EXPECT_NE(refused.out.find("the proxy already has another cluster"), std::string::npos) << refused.out;
    EXPECT_EQ(refused.out.find(secret), std::string::npos) << refused.out;
    EXPECT_NE(refused.out.find("password=***"), std::string::npos) << refused.out;

    // A move to a database that does not exist, named with a password in both forms.
    for (const std::string& target : {"host=127.0.0.1 port=" + std::to_string(d.b.port()) +
                                          " dbname=gone user=postgres password='" + secret + " x'",
                                      "postgresql://postgres:" + secret + "@127.0.0.1:" + std::to_string(d.b.port()) +
                                          "/gone?password=" + secret}) {
        const auto r = run_shell(move_command(d, 0, target));
        EXPECT_EQ(r.status, 1) << r.out;
        EXPECT_NE(r.out.find("gone"), std::string::npos) << r.out;
        EXPECT_EQ(r.out.find(secret), std::string::npos) << r.out;
    }
    // A move that succeeds prints its source and target without their passwords.
    d.b.run_sql("CREATE DATABASE shard4");
    const auto moved = run_shell(move_command(d, 0, d.b.conninfo_for("shard4") + " password=" + secret));
    ASSERT_EQ(moved.status, 0) << moved.out;
    EXPECT_NE(moved.out.find("logical shard 0 moved"), std::string::npos) << moved.out;
    EXPECT_EQ(moved.out.find(secret), std::string::npos) << moved.out;
}

TEST(ShardsHostile, ATenantsRoleOnAShardSeesOnlyItsOwnReceipts) {
    sharded_deployment d;
    d.init();
    broker_process b(d.a.conninfo(), {{"QUEEN_TENANCY_HEADER", "X-Tenant"}});
    auto c = client_of(b);
    for (const std::string tenant : {"acme", "globex"}) {
        const std::map<std::string, std::string> h{{"X-Tenant", tenant}, {"Content-Type", "application/json"}};
        ASSERT_EQ(c.request("POST", "/api/v1/configure",
                            json{{"queue", "rq"}, {"options", {{"dedupWindowSeconds", 0}}}}.dump(), h)
                      .status,
                  200);
        const json items = {
            {{"queue", "rq"}, {"partition", "p1"}, {"transactionId", "tx-" + tenant}, {"payload", {{"t", tenant}}}}};
        const auto pushed = c.request("POST", "/api/v1/push", json{{"items", items}}.dump(), h);
        ASSERT_EQ(pushed.status, 201) << pushed.body;
    }
    for (test_cluster* cluster : {&d.a, &d.b}) cluster->run_sql("CREATE ROLE acme_reader NOLOGIN");
    const std::string receipts = "SELECT transaction_id || ' ' || queue_name FROM queen.shard_receipts";
    std::set<std::string> owner_sees, reader_sees;
    for (std::size_t i = 0; i < databases; ++i) {
        d.on_shard(i,
                   "INSERT INTO queen.tenant_roles VALUES ('acme_reader', 'acme'); "
                   "GRANT USAGE ON SCHEMA queen TO acme_reader; "
                   "GRANT SELECT ON ALL TABLES IN SCHEMA queen TO acme_reader");
        for (const auto& row : d.rows_on_shard(i, receipts)) owner_sees.insert(row);
        for (const auto& row : d.rows_on_shard(i, "SET ROLE acme_reader; " + receipts)) reader_sees.insert(row);
    }
    const std::set<std::string> acme{"tx-acme acme\x1frq"}, both{"tx-acme acme\x1frq", "tx-globex globex\x1frq"};
    EXPECT_EQ(owner_sees, both) << "both pushes left a receipt";
    EXPECT_EQ(reader_sees, acme);
}

}  // namespace
}  // namespace queen::test
