// The Prometheus layer without a broker: the queue label cap, the per-second rate, and a
// rendered exposition (counters by their labels, database rows merged past the cap).
#include "metrics/exposition.hpp"
#include "metrics/minute_rate.hpp"
#include "metrics/prometheus_metrics.hpp"
#include "metrics/queue_label_cap.hpp"

#include <gtest/gtest.h>

#include <string>

namespace queen::metrics {
namespace {

bool has_line(const std::string& text, const std::string& line) {
    return text.find("\n" + line + "\n") != std::string::npos || text.rfind(line + "\n", 0) == 0;
}

TEST(QueueLabelCap, AdmitsTheFirstQueuesAndSumsTheRestAsOther) {
    queue_label_cap cap(2);
    EXPECT_EQ(cap.label("a"), "a");
    EXPECT_EQ(cap.label("b"), "b");
    EXPECT_EQ(cap.label("c"), "__other__");
    EXPECT_EQ(cap.label("a"), "a");  // admitted once, always
    EXPECT_EQ(cap.label("c"), "__other__");
}

TEST(MinuteRate, CountsTheLastSixtySecondsOnly) {
    minute_rate r;
    r.add(1000, 30);
    r.add(1030, 30);
    EXPECT_DOUBLE_EQ(r.per_second(1030), 1.0);
    EXPECT_DOUBLE_EQ(r.per_second(1059), 1.0);
    EXPECT_DOUBLE_EQ(r.per_second(1060), 0.5);  // second 1000 has left the window
    r.add(1090, 6);                            // reuses second 1030's bucket
    EXPECT_DOUBLE_EQ(r.per_second(1090), 0.1);
}

TEST(Exposition, CountersCarryTheirLabelsAndQueuesPastTheCapAreOther) {
    prometheus_metrics m(1);
    m.published("q", 3);
    m.published("q", 2);
    m.published("r", 4);  // past the cap
    m.acked("q", "g", 2);
    m.nacked("q", "g", "failed", 1);
    m.dead_lettered("q", "g", "dlq", 1);
    m.pop("q", false);
    m.http_request("/api/v1/push", "POST", 201, 0.002);
    m.published("q", 0);  // nothing happened: nothing moves
    scrape_state s;
    const auto text = render_exposition(m, s);
    EXPECT_TRUE(has_line(text, "queen_messages_published_total{queue=\"q\"} 5")) << text;
    EXPECT_TRUE(has_line(text, "queen_messages_published_total{queue=\"__other__\"} 4")) << text;
    EXPECT_TRUE(has_line(text, "queen_messages_acked_total{consumer_group=\"g\",queue=\"q\"} 2")) << text;
    EXPECT_TRUE(has_line(text, "queen_messages_nacked_total{consumer_group=\"g\",queue=\"q\",status=\"failed\"} 1"));
    EXPECT_TRUE(has_line(text, "queen_messages_dead_lettered_total{consumer_group=\"g\",queue=\"q\",reason=\"dlq\"} 1"));
    EXPECT_TRUE(has_line(text, "queen_pops_total{queue=\"q\",result=\"empty\"} 1"));
    EXPECT_TRUE(has_line(text, "queen_http_requests_total{method=\"POST\",route=\"/api/v1/push\",status=\"201\"} 1"));
    EXPECT_TRUE(has_line(text, "queen_http_request_duration_seconds_bucket{route=\"/api/v1/push\",le=\"0.0025\"} 1"));
    EXPECT_TRUE(has_line(text, "queen_http_request_duration_seconds_bucket{route=\"/api/v1/push\",le=\"0.001\"} 0"));
    EXPECT_EQ(m.published_total(), 9u);
    EXPECT_EQ(m.http_requests_total(), 1u);
    // No database answer: its families are left out, build_info says so.
    EXPECT_EQ(text.find("queen_queue_messages_ready"), std::string::npos);
    EXPECT_NE(text.find("codec=\"unknown\""), std::string::npos);
    EXPECT_TRUE(has_line(text, "queen_file_buffer_db_healthy 0"));
}

TEST(Exposition, DatabaseRowsBecomeFamiliesSumsAndAgesMergedPastTheCap) {
    prometheus_metrics m(1);
    scrape_state s;
    s.database_healthy = true;
    s.database = std::vector<store::metrics_sample>{
        {"queen_queue_messages_ready", "a", "g", std::nullopt, std::nullopt, 4},
        {"queen_queue_messages_ready", "b", "g", std::nullopt, std::nullopt, 5},
        {"queen_queue_messages_ready", "c", "g", std::nullopt, std::nullopt, 6},
        {"queen_consumer_lag_seconds", "a", "g", std::nullopt, std::nullopt, 1.5},
        {"queen_consumer_lag_seconds", "b", "g", std::nullopt, std::nullopt, 7},
        {"queen_consumer_lag_seconds", "c", "g", std::nullopt, std::nullopt, 3},
        {"queen_cluster_ack_total", std::nullopt, std::nullopt, "result", "success", 12},
        {"codec_extension", std::nullopt, std::nullopt, "version", "1.0", 1},
        {"not_a_family", std::nullopt, std::nullopt, std::nullopt, std::nullopt, 1},
    };
    const auto text = render_exposition(m, s);
    EXPECT_TRUE(has_line(text, "queen_queue_messages_ready{queue=\"a\",consumer_group=\"g\"} 4")) << text;
    EXPECT_TRUE(has_line(text, "queen_queue_messages_ready{queue=\"__other__\",consumer_group=\"g\"} 11")) << text;
    EXPECT_TRUE(has_line(text, "queen_consumer_lag_seconds{queue=\"__other__\",consumer_group=\"g\"} 7")) << text;
    EXPECT_TRUE(has_line(text, "# TYPE queen_cluster_ack_total counter")) << text;
    EXPECT_TRUE(has_line(text, "queen_cluster_ack_total{result=\"success\"} 12")) << text;
    EXPECT_NE(text.find("codec=\"zstd\""), std::string::npos) << text;
    EXPECT_EQ(text.find("not_a_family"), std::string::npos);
    EXPECT_EQ(text.find("codec_extension"), std::string::npos);
}

}  // namespace
}  // namespace queen::metrics
