// The in-memory activity counters and the document a flush sends (metrics/): what each
// event adds, that take() hands the minute over and starts the next from zero, and the
// document's member names, which are the columns of migration 17.
#include "metrics/activity_counters.hpp"
#include "metrics/activity_document.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace queen::metrics {
namespace {

using nlohmann::json;

TEST(ActivityCounters, CountsEventsPerBrokerAndPerQueue) {
    activity_counters a(60'000'000);
    a.push_request_total();
    a.push_request("q", 5);
    a.pop("q", 3, 30, 20);
    a.pop_empty("e");
    a.ack_request_total(3);
    a.ack("q", 2, 1, true);
    a.dead_lettered(1);
    a.transaction_total();
    a.transaction("q");
    a.loop_lag(1.5);
    a.loop_lag(0.5);
    gauge_sample s;
    s.pool_size = 4;
    s.db_calls = 7;
    a.sample(s, {{"q", 2}});
    a.sample(s, {});
    const auto m = a.take(120'000'000);
    EXPECT_EQ(m.minute_us, 60'000'000);
    EXPECT_EQ(m.counts.push_requests, 1);
    EXPECT_EQ(m.counts.push_messages, 5);
    EXPECT_EQ(m.counts.pop_requests, 2);
    EXPECT_EQ(m.counts.pop_messages, 3);
    EXPECT_EQ(m.counts.pop_empty, 1);
    EXPECT_EQ(m.counts.pop_lag_sum_ms, 30);
    EXPECT_EQ(m.counts.pop_lag_count, 3);
    EXPECT_EQ(m.counts.pop_lag_max_ms, 20);
    EXPECT_EQ(m.counts.ack_messages, 3);
    EXPECT_EQ(m.counts.ack_success, 2);
    EXPECT_EQ(m.counts.ack_failed, 1);
    EXPECT_EQ(m.counts.dead_lettered, 1);
    EXPECT_EQ(m.counts.transaction_requests, 1);
    EXPECT_EQ(m.counts.db_calls, 14);
    EXPECT_EQ(m.samples, 2);
    EXPECT_EQ(m.gauges.loop_lag_ms.n, 2);
    EXPECT_DOUBLE_EQ(m.gauges.loop_lag_ms.max, 1.5);
    EXPECT_DOUBLE_EQ(m.gauges.loop_lag_ms.min, 0.5);
    EXPECT_DOUBLE_EQ(m.gauges.loop_lag_ms.last, 0.5);
    const auto& q = m.queues.at("q");
    EXPECT_EQ(q.push_requests, 1);
    EXPECT_EQ(q.pop_messages, 3);
    EXPECT_EQ(q.ack_requests, 1);
    EXPECT_EQ(q.transactions, 1);
    EXPECT_DOUBLE_EQ(q.parked_sum, 2);
    EXPECT_EQ(m.queues.at("e").pop_empty, 1);

    const auto next = a.take(180'000'000);
    EXPECT_EQ(next.minute_us, 120'000'000);
    EXPECT_EQ(next.counts.push_messages, 0);
    EXPECT_TRUE(next.queues.empty());
}

TEST(ActivityDocument, NamesTheColumnsAndAveragesParkedPolls) {
    activity_counters a(1'764'547'200'000'000);  // 2025-12-01T00:00:00Z
    a.push_request("q", 2);
    gauge_sample s;
    s.rss_bytes = 100;
    a.sample(s, {{"q", 3}});
    a.sample(s, {});
    const auto doc = json::parse(activity_document(a.take(0), broker_identity{"h", 6632}, 7));
    EXPECT_EQ(doc["minute"], "2025-12-01T00:00:00.000000Z");
    EXPECT_EQ(doc["hostname"], "h");
    EXPECT_EQ(doc["port"], 6632);
    EXPECT_EQ(doc["retention_days"], 7);
    EXPECT_EQ(doc["broker"]["push_messages"], 2);
    EXPECT_EQ(doc["broker"]["rss_bytes"], (json{{"n", 2}, {"sum", 200.0}, {"min", 100.0}, {"max", 100.0}, {"last", 100.0}}));
    EXPECT_TRUE(doc["broker"]["loop_lag_ms"].is_null());  // no sample: NULL, not zeros
    ASSERT_EQ(doc["queues"].size(), 1u);
    EXPECT_EQ(doc["queues"][0]["queue_name"], "q");
    EXPECT_DOUBLE_EQ(doc["queues"][0]["parked_avg"].get<double>(), 1.5);
}

}  // namespace
}  // namespace queen::metrics
