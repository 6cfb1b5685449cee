// Parsing of the dead-letter and trace routes (api/admin/dlq_requests, api/admin/trace_requests), without
// a database.
#include "api/admin/dlq_requests.hpp"
#include "api/admin/trace_requests.hpp"
#include "domain/message_id.hpp"

#include <gtest/gtest.h>

#include <functional>

namespace queen::api {
namespace {

using nlohmann::json;
using query = std::map<std::string, std::string>;

const limits lim{.max_payload_depth = 64};  // a test value; the broker reads the database's

int status_of_failure(const std::function<void()>& f) {
    try {
        f();
    } catch (const api_error& e) {
        return static_cast<int>(status_of(e.code()));
    }
    return 0;
}

TEST(DlqFilter, EmptyValuesAreAbsentAndConditionsAreKept) {
    auto f = parse_dlq_filter(query{{"queue", ""}, {"consumerGroup", "null"}, {"partition", ""}}, lim);
    EXPECT_TRUE(f.empty());
    EXPECT_FALSE(f.all);
    auto g = parse_dlq_filter(query{{"queue", "q"}, {"consumerGroup", "g"}, {"partition", "p"},
                                    {"from", "2026-01-01T00:00:00Z"}, {"to", "2026-01-02 00:00:00+01:00"},
                                    {"id", "00000000-0000-0007-0000-00000000000A"}, {"all", "1"}},
                              lim);
    EXPECT_FALSE(g.empty());
    EXPECT_EQ(*g.queue, "q");
    EXPECT_EQ(*g.consumer_group, "g");
    EXPECT_EQ(*g.partition, "p");
    EXPECT_EQ(*g.from_us, 1767225600LL * 1000000);
    EXPECT_EQ(*g.to_us, (1767225600LL + 86400 - 3600) * 1000000);
    EXPECT_EQ(*g.message_id, domain::message_id(7, 10)) << "canonical lower-case form";
    EXPECT_TRUE(g.all);
}

TEST(DlqFilter, RejectsWhatIsWrong) {
    for (const query& q : std::vector<query>{{{"from", "yesterday"}},
                                              {{"to", "2026-02-30T99:00:00Z"}},
                                              {{"from", "2026-01-02T00:00:00Z"}, {"to", "2026-01-01T00:00:00Z"}},
                                              {{"id", "abc"}},
                                              {{"queue", std::string(256, 'q')}},
                                              {{"consumerGroup", std::string(256, 'g')}}})
        EXPECT_EQ(status_of_failure([&] { parse_dlq_filter(q, lim); }), 400) << q.begin()->first;
}

TEST(DlqPage, DefaultsAndRange) {
    auto p = parse_dlq_page(query{});
    EXPECT_EQ(p.limit, 100);
    EXPECT_EQ(p.offset, 0);
    EXPECT_EQ(parse_dlq_page(query{{"limit", "1000"}, {"offset", "5"}}).limit, 1000);
    for (const char* bad : {"0", "1001", "-1", "1e3", "ten"})
        EXPECT_EQ(status_of_failure([&] { parse_dlq_page(query{{"limit", bad}}); }), 400) << bad;
    EXPECT_EQ(status_of_failure([&] { parse_dlq_page(query{{"offset", "-1"}}); }), 400);
}

TEST(DlqRequeue, FilterFromQueryOrBodyAndExplicitAll) {
    auto r = parse_dlq_requeue(query{{"queue", "q"}}, "", lim);
    EXPECT_EQ(*r.filter.queue, "q");
    EXPECT_EQ(r.limit, static_cast<std::int64_t>(lim.max_push_items));
    auto b = parse_dlq_requeue(query{}, R"({"consumerGroup":"g","limit":5,"partition":null,"unknown":1})", lim);
    EXPECT_EQ(*b.filter.consumer_group, "g");
    EXPECT_FALSE(b.filter.partition);
    EXPECT_EQ(b.limit, 5);
    auto all = parse_dlq_requeue(query{}, R"({"all":true})", lim);
    EXPECT_TRUE(all.filter.all);
    EXPECT_TRUE(all.filter.empty());
    EXPECT_TRUE(parse_dlq_requeue(query{{"all", "true"}}, "  ", lim).filter.all);

    for (const std::string body : {"", "{}", R"({"all":false})", R"({"queue":null})"})
        EXPECT_EQ(status_of_failure([&] { parse_dlq_requeue(query{}, body, lim); }), 400) << body;
    for (const std::string body : {R"({"queue":1})", R"({"all":"true"})", R"({"limit":1.5})", R"({"limit":0})",
                                   R"([])", "{nope"})
        EXPECT_EQ(status_of_failure([&] { parse_dlq_requeue(query{{"all", "true"}}, body, lim); }), 400) << body;
    EXPECT_EQ(status_of_failure([&] { parse_dlq_requeue(query{{"queue", "a"}}, R"({"queue":"b"})", lim); }), 400);
}

TEST(DlqPurge, RefusesAnEmptyFilter) {
    EXPECT_EQ(status_of_failure([] { parse_dlq_purge(query{}, lim); }), 400);
    EXPECT_EQ(status_of_failure([] { parse_dlq_purge(query{{"all", "false"}}, lim); }), 400);
    EXPECT_TRUE(parse_dlq_purge(query{{"all", "true"}}, lim).all);
    EXPECT_EQ(*parse_dlq_purge(query{{"queue", "q"}}, lim).queue, "q");
}

TEST(TraceParsing, DefaultsAndNames) {
    auto t = parse_trace(json::parse(R"({"transactionId":"tx","partitionId":"12","data":{"a":1}})"), lim);
    EXPECT_EQ(t.transaction_id, "tx");
    EXPECT_EQ(t.partition_id, "12");
    EXPECT_EQ(t.consumer_group, "__QUEUE_MODE__");
    EXPECT_EQ(t.event_type, "info");
    EXPECT_EQ(t.data, R"({"a":1})");
    EXPECT_TRUE(t.trace_names.empty());
    auto u = parse_trace(json::parse(R"({"transactionId":"tx","partitionId":"12","data":null,"consumerGroup":"",
        "eventType":"done","traceNames":["b","a","b"]})"), lim);
    EXPECT_EQ(u.data, "null");
    EXPECT_EQ(u.consumer_group, "__QUEUE_MODE__");
    EXPECT_EQ(u.event_type, "done");
    EXPECT_EQ(u.trace_names, (std::vector<std::string>{"b", "a"}));
    auto v = parse_trace(json::parse(R"({"transactionId":"tx","partitionId":"12","data":1,"traceNames":"one"})"), lim);
    EXPECT_EQ(v.trace_names, (std::vector<std::string>{"one"}));
}

TEST(TraceParsing, RejectsWhatIsWrong) {
    for (const char* body : {R"({"partitionId":"1","data":1})", R"({"transactionId":"t","data":1})",
                             R"({"transactionId":"t","partitionId":"1"})", R"({"transactionId":1,"partitionId":"1","data":1})",
                             R"({"transactionId":"t","partitionId":1,"data":1})",
                             R"({"transactionId":"t","partitionId":"1","data":1,"eventType":""})",
                             R"({"transactionId":"t","partitionId":"1","data":1,"traceNames":{}})",
                             R"({"transactionId":"t","partitionId":"1","data":1,"traceNames":[null]})", R"([])",
                             R"({"transactionId":"t","partitionId":"1","data":{"k":["a\u0000b"]}})",
                             R"({"transactionId":"t","partitionId":"1","data":{"a\u0000":1}})"})
        EXPECT_EQ(status_of_failure([&] { parse_trace(json::parse(body), lim); }), 400) << body;
    json many{{"transactionId", "t"}, {"partitionId", "1"}, {"data", 1}, {"traceNames", json::array()}};
    for (std::size_t i = 0; i <= max_trace_names; ++i) many["traceNames"].push_back("n" + std::to_string(i));
    EXPECT_EQ(status_of_failure([&] { parse_trace(many, lim); }), 400);
}

TEST(TraceParsing, PartitionIdsAndPages) {
    EXPECT_EQ(parse_partition_id("42"), 42);
    EXPECT_FALSE(parse_partition_id("0"));
    EXPECT_FALSE(parse_partition_id("-3"));
    EXPECT_FALSE(parse_partition_id("4x"));
    EXPECT_FALSE(parse_partition_id(""));
    EXPECT_EQ(parse_trace_page(query{}, 50).limit, 50);
    EXPECT_EQ(status_of_failure([] { parse_trace_page(query{{"limit", "0"}}, 50); }), 400);
}

}  // namespace
}  // namespace queen::api
