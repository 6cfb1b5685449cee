// Moving a logical shard (docs/scaling.md, "Moving a logical shard"): what a fence does to the
// broker's traffic, and `queen shards move` under steady push and consume load, with the exact
// accounting of pushed, acknowledged, delivered and stored messages. Run as their own suite
// (scripts/run-tests.sh).
#include "sharded_deployment.hpp"
#include "shell_command.hpp"
#include "steady_load.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace queen::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

constexpr int logical_shards = 16;  // init's default
constexpr std::size_t databases = 4;

// `queen shards init` over the four databases, and a fifth, empty one to move to; its
// connection string.
std::string init_with_fifth(sharded_deployment& d) {
    d.init();
    d.b.run_sql("CREATE DATABASE shard4");
    return d.b.conninfo_for("shard4");
}

// A sharded deployment with an empty fifth database (shard4, on the second cluster) to move to,
// and a broker on its proxy with a spool, its long-polls re-checking every 300 ms.
struct move_deployment {
    sharded_deployment d;
    std::string target = init_with_fifth(d);
    temp_dir spool{"move", true};
    broker_process b{d.a.conninfo(), {{"QUEEN_SPOOL_DIR", spool.path.string()}, {"QUEEN_LONGPOLL_RECHECK_MS", "300"}}};
};

// The logical shard of a partition, from the proxy (it runs the hash the shards run).
int logical_shard_of(const sharded_deployment& d, const std::string& queue, const std::string& partition) {
    return std::stoi(d.a.run_sql("SELECT queen.partition_hash(" + quote(queue) + ", " + quote(partition) + ") & " +
                                 std::to_string(logical_shards - 1)));
}

// A partition name of `queue` whose logical shard init put on another database than `not_on`.
std::string partition_elsewhere(const sharded_deployment& d, const std::string& queue, std::size_t not_on) {
    for (int i = 0;; ++i) {
        const std::string name = "other" + std::to_string(i);
        if (static_cast<std::size_t>(logical_shard_of(d, queue, name)) % databases != not_on) return name;
    }
}

// The line of `queen shards move`'s output that says what moved (its schema log aside).
std::string moved_line(const std::string& out) {
    const auto at = out.find("logical shard ");
    return at == std::string::npos ? out : out.substr(at, out.find('\n', at) - at);
}

json ack_body(const json& message, const std::string& group) {
    return json{{"transactionId", message["transactionId"]}, {"partitionId", message["partitionId"]},
                {"leaseId", message["leaseId"]}, {"consumerGroup", group}, {"status", "completed"}};
}

// While a logical shard is fenced (the first step of a move), a push to it goes to the broker's
// spool, an acknowledgement of it answers 503 and changes nothing, a long-poll of its partition
// stays parked, and another database's partition is served. Lifting the fence drains the spool
// (each message stored once), answers the parked poll and takes the acknowledgement.
TEST(ShardMoves, AFencedShardsPushesAreSpooledItsPollsParkedAndOtherShardsServed) {
    move_deployment m;
    auto& d = m.d;
    auto& b = m.b;
    auto c = client_of(b);
    configure_queue(c, "fz");
    const int shard = logical_shard_of(d, "fz", "m");
    const std::size_t source = static_cast<std::size_t>(shard) % databases;
    const std::string other = partition_elsewhere(d, "fz", source);
    push_payloads(c, "fz", "m", {json{{"n", 1}}});
    push_payloads(c, "fz", other, {json{{"n", 1}}, json{{"n", 2}}});
    const auto leased = pop(c, "fz", "consumerGroup=g&batch=1", "m");
    ASSERT_EQ(leased.status, 200) << leased.body;
    const json leased_message = json::parse(leased.body)["messages"][0];
    const std::string stored_m = "SELECT count(*) FROM queen.messages WHERE queue = 'fz' AND partition = 'm'";

    d.on_shard(source, "SELECT queen.fence_shard(" + std::to_string(shard) + ")");
    const auto pushed = push_payloads(c, "fz", "m", {json{{"n", 2}}});
    EXPECT_EQ(pushed[0]["status"], "buffered") << pushed.dump();
    const auto refused = c.post("/api/v1/ack", ack_body(leased_message, "g"));
    EXPECT_EQ(refused.status, 503) << refused.body;
    const auto served = pop(c, "fz", "consumerGroup=g&batch=1", other);
    ASSERT_EQ(served.status, 200) << "another database's partition is served: " << served.body;
    EXPECT_EQ(json::parse(served.body)["messages"][0]["data"]["n"], 1);

    std::atomic<bool> answered{false};
    http_reply parked;
    std::thread poll([&] {
        http_client pc("127.0.0.1", b.port());
        parked = pc.get("/api/v1/pop/queue/fz/partition/m?consumerGroup=h&batch=5&wait=true&timeout=30000");
        answered = true;
    });
    std::this_thread::sleep_for(1500ms);  // several claims of the parked poll meet the fence
    EXPECT_FALSE(answered) << "the long-poll of the fenced shard stayed parked";
    EXPECT_EQ(d.on_shard(source, stored_m), "1") << "the spooled push is not stored while the fence holds";

    d.on_shard(source, "SELECT queen.unfence_shard(" + std::to_string(shard) + ")");
    poll.join();
    ASSERT_EQ(parked.status, 200) << parked.body;
    EXPECT_EQ(json::parse(parked.body)["messages"][0]["data"]["n"], 1);
    EXPECT_TRUE(eventually([&] { return d.on_shard(source, stored_m) == "2"; })) << "the spool drained once";
    EXPECT_EQ(d.on_shard(source, "SELECT count(DISTINCT transaction_id) FROM queen.messages WHERE queue = 'fz' AND "
                                 "partition = 'm'"),
              "2");
    const auto taken = c.post("/api/v1/ack", ack_body(leased_message, "g"));
    EXPECT_EQ(taken.status, 200) << "the lease taken before the fence still holds: " << taken.body;
    EXPECT_EQ(d.on_shard(source, "SELECT count(*) FROM pg_trigger WHERE tgname = 'shard_fence'"), "0")
        << "the fence's triggers went with it";
}

// A move interrupted after its fence (the command killed, a database lost) leaves the shard
// fenced and the move recorded on the proxies; running the same move again finishes it. Before
// the repoint it starts over: the messages end on the target, once. Once a proxy was
// repointed, the others are repointed and the source's release is finished; the command says so.
TEST(ShardMoves, RunningAnInterruptedMoveAgainFinishesIt) {
    move_deployment m;
    auto& d = m.d;
    const std::string& target = m.target;
    auto& b = m.b;
    auto c = client_of(b);
    configure_queue(c, "rs");
    const int shard = logical_shard_of(d, "rs", "m");
    const std::size_t source = static_cast<std::size_t>(shard) % databases;
    const std::string s = std::to_string(shard);
    push_payloads(c, "rs", "m", {json{{"n", 1}}, json{{"n", 2}}});
    // A second proxy database over the same shards: every move names both.
    d.a.run_sql("CREATE DATABASE proxy2");
    std::string init_second = "init --proxy " + shell_quoted(d.a.conninfo_for("proxy2"));
    for (const auto& database : d.shards) init_second += " --shard " + shell_quoted(database);
    const auto second = run_shell(shards_command(init_second));
    ASSERT_EQ(second.status, 0) << second.out;
    const std::string move = "move " + s + " --proxy " + shell_quoted(d.a.conninfo()) + " --proxy " +
                             shell_quoted(d.a.conninfo_for("proxy2")) + " --to " + shell_quoted(target);
    const std::string keyword_source = d.a.run_sql("SELECT conninfo FROM queen.shard_databases() WHERE logical_shard = " + s);

    // Interrupted before the copy, toward another target that is gone now: the record and the
    // fence are there, the messages on the source.
    d.a.run_sql("SELECT queen.record_shard_move(" + s + ", " + quote(keyword_source) +
                ", 'host=127.0.0.1 port=1 dbname=gone')");
    d.on_shard(source, "SELECT queen.fence_shard(" + s + ")");
    const auto again = run_shell(shards_command(move));
    ASSERT_EQ(again.status, 0) << again.out;
    EXPECT_EQ(d.b.run_sql_in("shard4", "SELECT count(*) FROM queen.messages WHERE queue = 'rs'"), "2");
    EXPECT_EQ(d.on_shard(source, "SELECT count(*) FROM queen.messages WHERE queue = 'rs'"), "0");
    EXPECT_EQ(d.on_shard(source, "SELECT fenced FROM queen.shard_identity"), "{}");
    EXPECT_EQ(d.a.run_sql("SELECT count(*) FROM queen.shard_move_under_way(" + s + ")"), "0");
    const auto popped = pop(c, "rs", "consumerGroup=g&batch=5", "m");
    ASSERT_EQ(popped.status, 200) << popped.body;
    EXPECT_EQ(json::parse(popped.body)["messages"].size(), 2u);

    // Interrupted during the repoint: the first proxy sends the shard to the target, the second
    // still to the source, which hosts it, fenced; the record names both.
    const std::string mapped = "SELECT conninfo FROM queen.shard_databases() WHERE logical_shard = " + s;
    const std::string keyword_shard4 = d.a.run_sql(mapped);
    EXPECT_EQ(d.a.run_sql_in("proxy2", mapped), keyword_shard4);
    d.a.run_sql_in("proxy2", "SELECT queen.repoint_shard(" + s + ", " + quote(keyword_source) + ")");
    d.on_shard(source, "SELECT queen.become_shard(16, (SELECT hosted FROM queen.shard_identity) || " + s + ")");
    d.on_shard(source, "SELECT queen.fence_shard(" + s + ")");
    d.a.run_sql("SELECT queen.record_shard_move(" + s + ", " + quote(keyword_source) + ", " + quote(keyword_shard4) +
                ")");
    const auto finish = run_shell(shards_command(move));
    ASSERT_EQ(finish.status, 0) << finish.out;
    EXPECT_NE(finish.out.find("the interrupted move's source released it"), std::string::npos) << finish.out;
    EXPECT_EQ(d.on_shard(source, "SELECT " + s + " = ANY (hosted) FROM queen.shard_identity"), "f");
    EXPECT_EQ(d.on_shard(source, "SELECT fenced FROM queen.shard_identity"), "{}");
    EXPECT_EQ(d.on_shard(source, "SELECT count(*) FROM pg_trigger WHERE tgname = 'shard_fence'"), "0");
    EXPECT_EQ(d.a.run_sql("SELECT count(*) FROM queen.shard_move_under_way(" + s + ")"), "0");
    EXPECT_EQ(d.a.run_sql_in("proxy2", mapped), keyword_shard4) << "the second proxy was repointed";
    // Nothing of the shard was left to the source: the target serves it.
    push_payloads(c, "rs", "m", {json{{"n", 3}}});
    EXPECT_EQ(d.b.run_sql_in("shard4", "SELECT count(*) FROM queen.messages WHERE queue = 'rs'"), "3");
}

// A consumer of one partition (on a database the move does not touch) with a backlog, popping one
// message at a time and acknowledging it; it records when each delivery came and every answer
// that was not a delivery, an empty queue or a taken acknowledgement.
class partition_consumer {
public:
    partition_consumer(unsigned short port, std::string queue, std::string partition)
        : port_(port), queue_(std::move(queue)), partition_(std::move(partition)) {
        thread_ = std::thread([this] { run(); });
    }
    ~partition_consumer() { stop(); }
    void stop() {
        stopping_ = true;
        if (thread_.joinable()) thread_.join();
    }
    int deliveries_between(clock::time_point from, clock::time_point to) {
        std::lock_guard<std::mutex> lock(mu_);
        int n = 0;
        for (auto t : times_) n += t >= from && t <= to;
        return n;
    }
    int refused() const { return refused_; }
    int delivered() {
        std::lock_guard<std::mutex> lock(mu_);
        return static_cast<int>(times_.size());
    }

private:
    void run() {
        http_client c("127.0.0.1", port_);
        while (!stopping_) {
            auto r = c.get("/api/v1/pop/queue/" + queue_ + "/partition/" + partition_ + "?consumerGroup=side&batch=1");
            if (r.status == 200) {
                {
                    std::lock_guard<std::mutex> lock(mu_);
                    times_.push_back(clock::now());
                }
                const json message = json::parse(r.body)["messages"][0];
                if (c.post("/api/v1/ack", ack_body(message, "side")).status != 200) ++refused_;
            } else if (r.status != 204) {
                ++refused_;
            }
            std::this_thread::sleep_for(10ms);
        }
    }
    unsigned short port_;
    std::string queue_, partition_;
    std::mutex mu_;
    std::vector<clock::time_point> times_;
    std::atomic<int> refused_{0};
    std::atomic<bool> stopping_{false};
    std::thread thread_;
};

// `queen shards move` of a lane's logical shard to a new database and back to its first one,
// under steady load: every push answered is stored once over the five databases, delivered once,
// first deliveries in lane order, every message acknowledged; the shard's partitions live where
// the last move put them; a consumer of a partition on another database is served throughout.
TEST(ShardMoves, MovingALogicalShardUnderLoadLosesDoublesAndReordersNothing) {
    move_deployment m;
    auto& d = m.d;
    const std::string& target = m.target;
    auto& b = m.b;
    auto admin = client_of(b);
    configure_queue(admin, "mv");
    configure_queue(admin, "side");
    const int shard = logical_shard_of(d, "mv", "lane0");
    const std::size_t source = static_cast<std::size_t>(shard) % databases;
    const std::string side_partition = partition_elsewhere(d, "side", source);
    for (int batch = 0; batch < 20; ++batch) {
        std::vector<json> payloads;
        for (int i = 0; i < 100; ++i) payloads.push_back(json{{"n", batch * 100 + i}});
        push_payloads(admin, "side", side_partition, payloads);
    }
    const std::string move_to = "move " + std::to_string(shard) + " --proxy " + shell_quoted(d.a.conninfo()) + " --to ";
    const std::string partitions_of_shard =
        "SELECT count(*) FROM queen.log_partitions WHERE id & 15 = " + std::to_string(shard);

    // Refusals, before anything is fenced: the mapping stays as it was.
    const std::string mapping_of_shard =
        "SELECT conninfo FROM queen.shard_databases() WHERE logical_shard = " + std::to_string(shard);
    const std::string mapped_before = d.a.run_sql(mapping_of_shard);
    const auto here = run_shell(shards_command(move_to + shell_quoted(d.shards[source])));
    EXPECT_EQ(here.status, 1);
    EXPECT_NE(here.out.find("is already on"), std::string::npos) << here.out;
    const auto beyond = run_shell(shards_command("move 16 --proxy " + shell_quoted(d.a.conninfo()) + " --to " +
                                                 shell_quoted(target)));
    EXPECT_EQ(beyond.status, 1);
    EXPECT_NE(beyond.out.find("logical shard 16 does not exist (the cluster has 0..15)"), std::string::npos)
        << beyond.out;
    const auto no_target = run_shell(shards_command("move 3 --proxy " + shell_quoted(d.a.conninfo())));
    EXPECT_EQ(no_target.status, 2);
    EXPECT_NE(no_target.out.find("--to is needed"), std::string::npos) << no_target.out;
    const auto no_shard = run_shell(shards_command("move --to x --proxy y"));
    EXPECT_EQ(no_shard.status, 2);
    EXPECT_NE(no_shard.out.find("move needs the logical shard to move"), std::string::npos) << no_shard.out;
    EXPECT_EQ(d.a.run_sql(mapping_of_shard), mapped_before);

    steady_load load(b.port(), "mv", {.lanes = 12, .retry_acks = true});
    partition_consumer side(b.port(), "side", side_partition);
    load.wait_produced(120);

    const auto away_from = clock::now();
    const auto away = run_shell(shards_command(move_to + shell_quoted(target)));
    const auto away_until = clock::now();
    ASSERT_EQ(away.status, 0) << away.out;
    std::cout << "[ move ] " << moved_line(away.out) << "\n";
    EXPECT_EQ(d.on_shard(source, partitions_of_shard), "0") << "the source keeps none of the shard's partitions";
    EXPECT_NE(d.b.run_sql_in("shard4", partitions_of_shard), "0") << "the target holds them";
    EXPECT_EQ(d.b.run_sql_in("shard4", "SELECT hosted FROM queen.shard_identity"), "{" + std::to_string(shard) + "}");
    const std::string mapped = d.a.run_sql(mapping_of_shard);
    EXPECT_NE(mapped.find("dbname='shard4'"), std::string::npos) << "the proxy sends the shard's calls there: " << mapped;

    load.wait_produced(load.produced() + 120);
    const auto back_from = clock::now();
    const auto back = run_shell(shards_command(move_to + shell_quoted(d.shards[source])));
    const auto back_until = clock::now();
    ASSERT_EQ(back.status, 0) << back.out;
    std::cout << "[ move ] " << moved_line(back.out) << "\n";
    EXPECT_EQ(d.b.run_sql_in("shard4", partitions_of_shard), "0");
    EXPECT_NE(d.on_shard(source, partitions_of_shard), "0") << "the shard is back on its first database";

    load.wait_produced(load.produced() + 120);
    load.stop_producing();
    ASSERT_TRUE(eventually([&] { return load.all_delivered(); }, 60s)) << "not every stored message reached the group";
    const std::string unacknowledged =
        "SELECT count(*) FROM queen.messages m WHERE m.queue = 'mv' AND m.\"offset\" > coalesce((SELECT max(c.committed) "
        "FROM queen.log_consumers c WHERE c.partition_id = m.partition_id AND c.consumer_group = 'g'), 0)";
    ASSERT_TRUE(eventually([&] { return d.sum_on_shards(unacknowledged) == 0; }, 30s))
        << "the group did not acknowledge every message";
    load.stop_consuming();
    side.stop();

    const std::string ids = "SELECT transaction_id FROM queen.messages WHERE queue = 'mv'";
    std::multiset<std::string> stored;
    for (std::size_t i = 0; i < databases; ++i)
        for (const auto& id : d.rows_on_shard(i, ids)) stored.insert(id);
    for (const auto& id : d.b.column_in("shard4", ids)) stored.insert(id);
    std::cout << "[ move ] " << load.summary() << ", stored " << stored.size() << "; the other database's consumer got "
              << side.delivered() << "\n";
    EXPECT_EQ(static_cast<int>(load.answered().size()), load.produced()) << "every push was answered in the end";
    EXPECT_EQ(stored.size(), load.answered().size()) << "stored once each";
    EXPECT_EQ(std::set<std::string>(stored.begin(), stored.end()), load.answered());
    EXPECT_EQ(load.delivered(), load.answered()) << "delivered exactly what was stored";
    EXPECT_EQ(load.most_deliveries(), 1) << "no message delivered twice";
    EXPECT_EQ(load.out_of_order(), 0) << "first deliveries in order per lane";
    EXPECT_EQ(load.refused_acks(), 0) << "every acknowledgement was taken (after a 503 during a fence)";
    EXPECT_EQ(side.refused(), 0) << "the other database's consumer was never refused";
    EXPECT_GT(side.deliveries_between(away_from, away_until), 0) << "and was served during the first move";
    EXPECT_GT(side.deliveries_between(back_from, back_until), 0) << "and during the second";
}

}  // namespace
}  // namespace queen::test
