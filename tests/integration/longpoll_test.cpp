// Long-poll pops (docs/http-api.md, pop: wait=true). The brokers here re-check parked pops only every
// 60 s (QUEEN_LONGPOLL_RECHECK_MS=60000), longer than any pop's 30 s timeout, so a parked
// pop that returns a message well before its timeout was woken by a notification: a push on
// the same broker, a push through another broker on the same database, or an ack that
// released a lease. Also: the 204 of an expired long poll, and a client that disconnects
// while parked cancels its pop (nothing is leased to it).
#include "test_env.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>

namespace {

using namespace queen::test;
using nlohmann::json;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

struct timed_reply {
    http_reply reply;
    steady::duration elapsed{};
};

// Starts a pop on its own connection and thread; the future holds its answer.
std::future<timed_reply> start_pop(const broker_process& b, const std::string& queue, const std::string& query) {
    const unsigned short port = b.port();
    return std::async(std::launch::async, [port, queue, query] {
        http_client c("127.0.0.1", port);
        auto start = steady::now();
        timed_reply out;
        out.reply = pop(c, queue, query);
        out.elapsed = steady::now() - start;
        return out;
    });
}

// Waits for a parked pop's answer; it must come long before its 30 s timeout.
timed_reply woken(std::future<timed_reply>& f) {
    if (f.wait_for(40s) != std::future_status::ready) throw std::runtime_error("parked pop never answered");
    auto r = f.get();
    EXPECT_LT(r.elapsed, 20s) << "the parked pop was not woken; it ran into its timeout";
    return r;
}

class LongPoll : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        const std::map<std::string, std::string> env{{"QUEEN_LONGPOLL_RECHECK_MS", "60000"}};
        a_ = new broker_process(cluster().conninfo(), env);
        b_ = new broker_process(cluster().conninfo(), env);
    }
    static void TearDownTestSuite() {
        delete a_;
        delete b_;
        a_ = b_ = nullptr;
    }
    static broker_process& a() { return *a_; }
    static broker_process& b() { return *b_; }

private:
    static broker_process* a_;
    static broker_process* b_;
};

broker_process* LongPoll::a_ = nullptr;
broker_process* LongPoll::b_ = nullptr;

}  // namespace

TEST_F(LongPoll, PushOnTheSameBrokerWakesAParkedPop) {
    const std::string q = unique_name("lp-same");
    auto parked = start_pop(a(), q, "wait=true&timeout=30000");
    auto parked_group = start_pop(a(), q, "wait=true&timeout=30000&consumerGroup=lp-group&batch=5");
    wait_parked(a(), 2);
    auto c = client_of(a());
    auto pushed = push_payloads(c, q, "", {json{{"hello", "parked"}}});

    for (auto* f : {&parked, &parked_group}) {
        auto r = woken(*f);
        ASSERT_EQ(r.reply.status, 200) << r.reply.body;
        auto body = r.reply.json();
        ASSERT_EQ(body["messages"].size(), 1u);
        EXPECT_EQ(body["messages"][0]["data"], json({{"hello", "parked"}}));
        EXPECT_EQ(body["messages"][0]["id"], pushed[0]["message_id"]);
        EXPECT_EQ(body["messages"][0]["transactionId"], pushed[0]["transaction_id"]);
    }
}

TEST_F(LongPoll, PushThroughAnotherBrokerWakesAParkedPop) {
    const std::string q = unique_name("lp-cross");
    auto parked_on_b = start_pop(b(), q, "wait=true&timeout=30000");
    wait_parked(b(), 1);
    auto via_a = client_of(a());
    auto pushed = push_payloads(via_a, q, "P", {"across brokers"});

    auto r = woken(parked_on_b);
    ASSERT_EQ(r.reply.status, 200) << r.reply.body;
    auto body = r.reply.json();
    ASSERT_EQ(body["messages"].size(), 1u);
    EXPECT_EQ(body["messages"][0]["data"], "across brokers");
    EXPECT_EQ(body["messages"][0]["partition"], "P");
    EXPECT_EQ(body["messages"][0]["id"], pushed[0]["message_id"]);

    // And the other way round.
    const std::string q2 = unique_name("lp-cross-back");
    auto parked_on_a = start_pop(a(), q2, "wait=true&timeout=30000&consumerGroup=back");
    wait_parked(a(), 1);
    auto via_b = client_of(b());
    push_payloads(via_b, q2, "", {"back again"});
    r = woken(parked_on_a);
    ASSERT_EQ(r.reply.status, 200) << r.reply.body;
    EXPECT_EQ(r.reply.json()["messages"][0]["data"], "back again");
}

TEST_F(LongPoll, PopParkedOnAPartitionIgnoresOtherPartitionsAndWakesForItsOwn) {
    const std::string q = unique_name("lp-partition");
    auto parked = start_pop(a(), q, "wait=true&timeout=30000&batch=5");
    auto parked_p = std::async(std::launch::async, [port = a().port(), q] {
        http_client c("127.0.0.1", port);
        auto start = steady::now();
        timed_reply out;
        out.reply = pop(c, q, "wait=true&timeout=30000&batch=5", "Mine");
        out.elapsed = steady::now() - start;
        return out;
    });
    wait_parked(a(), 2);
    auto c = client_of(b());
    push_payloads(c, q, "Other", {"not for the partition pop"});
    // The queue-wide pop takes it; the partition pop was woken too but must park again.
    auto r = woken(parked);
    ASSERT_EQ(r.reply.status, 200) << r.reply.body;
    EXPECT_EQ(r.reply.json()["messages"][0]["data"], "not for the partition pop");
    EXPECT_EQ(parked_p.wait_for(1s), std::future_status::timeout) << "the partition pop returned without a message";

    push_payloads(c, q, "Mine", {"mine-1", "mine-2"});
    r = woken(parked_p);
    ASSERT_EQ(r.reply.status, 200) << r.reply.body;
    auto body = r.reply.json();
    EXPECT_EQ(body["partition"], "Mine");
    ASSERT_EQ(body["messages"].size(), 2u);
    EXPECT_EQ(body["messages"][0]["data"], "mine-1");
    EXPECT_EQ(body["messages"][1]["data"], "mine-2");
}

TEST_F(LongPoll, CompletingTheLeasedSpanWakesAParkedPopForTheRest) {
    const std::string q = unique_name("lp-complete");
    auto c = client_of(a());
    push_payloads(c, q, "", {"s1", "s2", "s3"});
    auto first = pop(c, q, "batch=2&consumerGroup=cg");
    ASSERT_EQ(first.status, 200) << first.body;
    const json leased = first.json();
    ASSERT_EQ(leased["messages"].size(), 2u);

    auto parked = start_pop(b(), q, "wait=true&timeout=30000&batch=5&consumerGroup=cg");
    wait_parked(b(), 1);
    ASSERT_EQ(parked.wait_for(0s), std::future_status::timeout) << "the pop did not park behind the lease";
    // A batch ack of the whole span commits it and releases the lease.
    json acks = json::array();
    for (const auto& m : leased["messages"])
        acks.push_back(json{{"transactionId", m["transactionId"]}, {"partitionId", m["partitionId"]},
                            {"leaseId", m["leaseId"]}, {"status", "completed"}, {"error", nullptr}});
    auto a_reply = c.post("/api/v1/ack/batch", json{{"consumerGroup", "cg"}, {"acknowledgments", acks}});
    ASSERT_EQ(a_reply.status, 200) << a_reply.body;
    for (const auto& x : a_reply.json()) EXPECT_EQ(x["success"], true) << x.dump();

    auto r = woken(parked);
    ASSERT_EQ(r.reply.status, 200) << r.reply.body;
    auto body = r.reply.json();
    ASSERT_EQ(body["messages"].size(), 1u);
    EXPECT_EQ(body["messages"][0]["data"], "s3");
    EXPECT_EQ(body["messages"][0]["offset"], 3);
}

TEST_F(LongPoll, ShortTimeoutOnAnEmptyQueueAnswers204WithoutBody) {
    auto c = client_of(a());
    const std::string existing = unique_name("lp-empty");
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", existing}}).status, 200);
    for (const std::string& q : {existing, unique_name("lp-unknown")}) {
        SCOPED_TRACE(q);
        auto start = steady::now();
        auto r = pop(c, q, "wait=true&timeout=500");
        auto elapsed = steady::now() - start;
        EXPECT_EQ(r.status, 204);
        EXPECT_TRUE(r.body.empty()) << r.body;
        if (r.has_header("content-length")) {
            EXPECT_EQ(r.headers.at("content-length"), "0");
        }
        EXPECT_GE(elapsed, 450ms) << "wait=true did not wait";
        EXPECT_LT(elapsed, 15s);
    }
    // The connection stays usable after a 204.
    EXPECT_EQ(c.get("/health").status, 200);
}

TEST_F(LongPoll, ClientThatDisconnectsCancelsItsParkedPop) {
    const std::string q = unique_name("lp-gone");
    {
        int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        ASSERT_GE(fd, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(a().port());
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
        const std::string req = "GET /api/v1/pop/queue/" + url_encode(q) +
                                "?wait=true&timeout=30000&batch=10 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
        ASSERT_EQ(::write(fd, req.data(), req.size()), static_cast<ssize_t>(req.size()));
        wait_parked(a(), 1);
        ::close(fd);  // the client goes away while its pop is parked
    }
    wait_parked(a(), 0);  // the broker noticed and let the pop go

    auto c = client_of(a());
    auto pushed = push_payloads(c, q, "", {"for the living", "and more"});
    // Give a (wrongly) still-parked pop every chance to take the messages first.
    std::this_thread::sleep_for(1s);

    EXPECT_EQ(data_sum("SELECT count(*) FROM queen.log_consumers c JOIN queen.queues q ON q.id = c.queue_id "
                       "WHERE q.name = " + quote(q) + " AND c.lease_id IS NOT NULL"),
              0)
        << "a message was leased to the client that had gone away";
    auto other = client_of(a());
    auto r = pop(other, q, "batch=10");
    ASSERT_EQ(r.status, 200) << "the messages were leased to the dead client";
    auto body = r.json();
    ASSERT_EQ(body["messages"].size(), 2u);
    EXPECT_EQ(body["messages"][0]["data"], "for the living");
    EXPECT_EQ(body["messages"][0]["id"], pushed[0]["message_id"]);
    EXPECT_EQ(data_value("SELECT c.lease_id FROM queen.log_consumers c JOIN queen.queues q ON q.id = c.queue_id "
                                "WHERE q.name = " + quote(q) + " AND c.lease_id IS NOT NULL"),
              body["leaseId"].get<std::string>());
    // The broker is healthy and still parks and wakes pops on that queue.
    ack(other, body["messages"][1]);
    auto parked = start_pop(a(), q, "wait=true&timeout=30000");
    wait_parked(a(), 1);
    push_payloads(c, q, "", {"later"});
    auto w = woken(parked);
    ASSERT_EQ(w.reply.status, 200) << w.reply.body;
    EXPECT_EQ(w.reply.json()["messages"][0]["data"], "later");
}

struct release_case {
    std::string name;
    std::string status;     // ack status that releases the lease
    bool ack_via_other;     // ack through broker B while the pop is parked on broker A
    std::string group;      // "" = queue mode
};

class LongPollRelease : public LongPoll, public ::testing::WithParamInterface<release_case> {};

TEST_P(LongPollRelease, AckThatReleasesTheLeaseWakesAParkedPop) {
    const auto& p = GetParam();
    const std::string q = unique_name("lp-release");
    auto c = client_of(a());
    // retryDelay 0 so that a `failed` is redelivered at once; one partition only.
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", q}, {"options", {{"retryDelay", 0}}}}).status, 200);
    push_payloads(c, q, "", {"only-1", "only-2"});
    const std::string group_query = p.group.empty() ? "" : "&consumerGroup=" + p.group;
    auto first = pop(c, q, "batch=2" + group_query);
    ASSERT_EQ(first.status, 200) << first.body;
    const json leased = first.json();
    ASSERT_EQ(leased["messages"].size(), 2u);

    // The only partition is leased: a second consumer parks.
    auto parked = start_pop(a(), q, "wait=true&timeout=30000&batch=2" + group_query);
    wait_parked(a(), 1);
    ASSERT_EQ(parked.wait_for(0s), std::future_status::timeout) << "the pop did not park behind the lease";

    auto acker = p.ack_via_other ? client_of(b()) : client_of(a());
    auto answer = ack(acker, leased["messages"][0], p.status, p.group);
    EXPECT_EQ(answer["leaseReleased"], true) << answer.dump();

    auto r = woken(parked);
    ASSERT_EQ(r.reply.status, 200) << r.reply.body;
    auto body = r.reply.json();
    ASSERT_EQ(body["messages"].size(), 2u) << r.reply.body;
    // The redelivery: same messages, same ids, a new lease.
    EXPECT_EQ(body["messages"][0]["id"], leased["messages"][0]["id"]);
    EXPECT_EQ(body["messages"][0]["transactionId"], leased["messages"][0]["transactionId"]);
    EXPECT_EQ(body["messages"][0]["data"], "only-1");
    EXPECT_EQ(body["messages"][1]["data"], "only-2");
    EXPECT_NE(body["leaseId"], leased["leaseId"]);
    EXPECT_EQ(data_value("SELECT format('%s/%s', c.committed, c.lease_id) FROM queen.log_consumers c "
                                "JOIN queen.queues q ON q.id = c.queue_id WHERE q.name = " + quote(q) +
                                " AND c.consumer_group = " + quote(p.group.empty() ? "__QUEUE_MODE__" : p.group)),
              "0/" + body["leaseId"].get<std::string>());
}

INSTANTIATE_TEST_SUITE_P(LongPoll, LongPollRelease,
                         ::testing::Values(release_case{"retry", "retry", false, ""},
                                           release_case{"failed_no_delay", "failed", false, ""},
                                           release_case{"retry_group", "retry", false, "lp-g"},
                                           release_case{"retry_via_other_broker", "retry", true, ""},
                                           release_case{"failed_group_via_other_broker", "failed", true, "lp-g2"}),
                         [](const ::testing::TestParamInfo<release_case>& info) { return info.param.name; });
