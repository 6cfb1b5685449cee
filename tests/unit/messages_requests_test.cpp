// Parsing of the message browser's query strings (api/admin/messages_requests), without a database.
#include "api/admin/messages_requests.hpp"

#include <gtest/gtest.h>

#include <functional>

namespace queen::api {
namespace {

using query = std::map<std::string, std::string>;

const limits lim{.max_payload_depth = 64};  // a test value; the broker reads the database's
constexpr std::int64_t s = 1000000;
constexpr std::int64_t jan1 = 1767225600LL * s;  // 2026-01-01T00:00:00Z

// The message of the 400 f throws; "" when it throws nothing.
std::string bad_request_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const api_error& e) {
        EXPECT_EQ(static_cast<int>(status_of(e.code())), 400);
        return e.what();
    }
    return "";
}

TEST(MessageBrowse, DefaultsAreTheLastHourToTheEndOfTheMinute) {
    const std::int64_t now = jan1 + 10 * 60 * s + 17 * s + 5;  // 00:10:17.000005
    auto r = parse_message_browse(query{}, lim, now);
    EXPECT_EQ(r.to_us, jan1 + 11 * 60 * s - 1);
    EXPECT_EQ(r.from_us, now - 3600 * s);
    EXPECT_EQ(r.limit, 200);
    EXPECT_EQ(r.offset, 0);
    EXPECT_FALSE(r.queue || r.partition || r.namespace_name || r.task || r.status || r.consumer_group);
}

TEST(MessageBrowse, FiltersAndTheWindowAreKept) {
    auto r = parse_message_browse(query{{"queue", "q"}, {"partition", "p"}, {"ns", "n"}, {"namespace", "other"},
                                        {"task", "t"}, {"status", "dead_letter"}, {"consumerGroup", "g"},
                                        {"from", "2026-01-01T00:00:00Z"}, {"to", "2026-01-01T00:05:00Z"},
                                        {"limit", "10000"}, {"offset", "7"}, {"unknown", "x"}},
                                  lim, 0);
    EXPECT_EQ(*r.queue, "q");
    EXPECT_EQ(*r.partition, "p");
    EXPECT_EQ(*r.namespace_name, "n");  // ns wins over namespace
    EXPECT_EQ(*r.task, "t");
    EXPECT_EQ(*r.status, "dead_letter");
    EXPECT_EQ(*r.consumer_group, "g");
    EXPECT_EQ(r.from_us, jan1);
    EXPECT_EQ(r.to_us, jan1 + 6 * 60 * s - 1);
    EXPECT_EQ(r.limit, 10000);
    EXPECT_EQ(r.offset, 7);
    EXPECT_EQ(*parse_message_browse(query{{"namespace", "m"}}, lim, jan1).namespace_name, "m");
    auto empty = parse_message_browse(query{{"queue", ""}, {"status", ""}, {"consumerGroup", ""}}, lim, jan1);
    EXPECT_FALSE(empty.queue || empty.status || empty.consumer_group);
    for (const char* st : {"pending", "processing", "completed", "dead_letter", "deleted"})
        EXPECT_EQ(*parse_message_browse(query{{"status", st}}, lim, jan1).status, st);
}

TEST(MessageBrowse, BadValuesNameTheParameter) {
    const std::vector<std::pair<query, std::string>> bad{
        {{{"limit", "abc"}}, "limit"},
        {{{"limit", "-1"}}, "limit"},
        {{{"limit", "10001"}}, "limit"},
        {{{"offset", "-3"}}, "offset"},
        {{{"from", "nope"}}, "from"},
        {{{"to", "2026-13-45"}}, "to"},
        {{{"status", "failed"}}, "status"},
        {{{"from", "2026-01-02T00:00:00Z"}, {"to", "2026-01-01T00:00:00Z"}}, "from"},
        {{{"queue", std::string(300, 'q')}}, "queue"},
    };
    for (const auto& [q, name] : bad) {
        const auto msg = bad_request_of([&] { parse_message_browse(q, lim, jan1); });
        EXPECT_NE(msg.find(name), std::string::npos) << name << ": " << msg;
    }
    EXPECT_NE(bad_request_of([] { parse_queue_messages(query{{"limit", "x"}}); }).find("limit"), std::string::npos);
    EXPECT_EQ(parse_queue_messages(query{}).limit, 50);
}

}  // namespace
}  // namespace queen::api
