// The small policies that keep hostile clients bounded (docs/security.md, "Hostile clients"),
// without a broker: UTF-8 validation and echoing, the JSON value count, integers from JSON,
// the parse budget, the accept loop's back-off, and the CORS origin rules.
#include "api/shared/api_error.hpp"
#include "api/shared/json_guard.hpp"
#include "api/shared/validate.hpp"
#include "config/cors_origins.hpp"
#include "util/memory_budget.hpp"
#include "domain/message_id.hpp"
#include "util/utf8.hpp"
#include "http/accept_backoff.hpp"
#include "http/cors_policy.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <functional>
#include <limits>
#include <stdexcept>

namespace queen {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// The status and message of the api_error f throws; {0, ""} when it throws none.
std::pair<int, std::string> failure_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const api::api_error& e) {
        return {static_cast<int>(api::status_of(e.code())), e.what()};
    }
    return {0, ""};
}

TEST(Utf8, FirstInvalidByteIsFound) {
    EXPECT_EQ(util::first_invalid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), std::nullopt);
    EXPECT_EQ(util::first_invalid_utf8("q\xff"), 1u);
    EXPECT_EQ(util::first_invalid_utf8("ab\xc3"), 2u);            // cut sequence
    EXPECT_EQ(util::first_invalid_utf8("\xc0\xaf"), 0u);          // overlong '/'
    EXPECT_EQ(util::first_invalid_utf8("x\xed\xa0\x80"), 1u);     // encoded surrogate
    EXPECT_EQ(util::first_invalid_utf8("\xf4\x90\x80\x80"), 0u);  // above U+10FFFF
}

TEST(Utf8, EchoIsValidPrintableAndCutOnACharacterBoundary) {
    EXPECT_EQ(util::printable_echo("/api/v1/nope\xff", 200), "/api/v1/nope\xef\xbf\xbd");
    EXPECT_EQ(util::printable_echo("a\x01" "b\x7f", 200), "a\\x01b\\x7f");
    // 127 ASCII bytes and a 2-byte character do not fit in 128: the character is left out whole.
    const std::string kid = std::string(127, 'k') + "\xc3\xa9";
    const std::string echoed = util::printable_echo(kid, 128);
    EXPECT_EQ(echoed, std::string(127, 'k') + "\xe2\x80\xa6");
    EXPECT_EQ(util::first_invalid_utf8(echoed), std::nullopt);
    EXPECT_EQ(util::printable_echo(std::string(128, 'k'), 128), std::string(128, 'k'));
}

TEST(JsonValues, TheScanCountsWhatADocumentHolds) {
    EXPECT_EQ(api::check_json_text("[]", 8), 1u);
    EXPECT_EQ(api::check_json_text(R"({"a":1,"b":[true,null,-1.5e3,"x"]})", 8), 9u);  // keys count
    EXPECT_EQ(api::check_json_text("[[],[],[]]", 8), 4u);
    EXPECT_EQ(api::check_json_text(R"(["[1,2]", "{\"a\":3}"])", 8), 3u);  // brackets in strings are text
    const auto [status, message] = failure_of([] { api::check_json_text("[1,2,3,4,5]", 8, 5); });
    EXPECT_EQ(status, 413);
    EXPECT_NE(message.find("more than 5 JSON values"), std::string::npos) << message;
    EXPECT_EQ(failure_of([] { api::check_json_text("[1,2,3,4]", 8, 5); }).first, 0);
}

TEST(JsonIntegers, EveryNumberKindIsRangeChecked) {
    const auto range = [](const json& v) { return failure_of([&] { api::json_integer(v, "options.priority", -10, 10); }); };
    EXPECT_EQ(api::json_integer(json(7), "x", -10, 10), 7);
    EXPECT_EQ(api::json_integer(json(7.0), "x", -10, 10), 7);
    EXPECT_EQ(api::json_integer(json(-10), "x", -10, 10), -10);
    // 2^64 - 10^6 would be -10^6 read as int64; a double of 2^63 or more has no int64 value.
    const auto wrapped = range(json(std::uint64_t{18446744073708551616ULL}));
    EXPECT_EQ(wrapped.first, 400);
    EXPECT_NE(wrapped.second.find("options.priority must be between -10 and 10, got 18446744073708551616"),
              std::string::npos)
        << wrapped.second;
    EXPECT_EQ(range(json(1e19)).first, 400);
    EXPECT_EQ(range(json(-1e300)).first, 400);
    EXPECT_NE(range(json(1.5)).second.find("must be an integer"), std::string::npos);
    EXPECT_NE(range(json("3")).second.find("must be an integer"), std::string::npos);
    EXPECT_EQ(api::json_integer(json(std::numeric_limits<std::int64_t>::max()), "x", 0,
                                std::numeric_limits<std::int64_t>::max()),
              std::numeric_limits<std::int64_t>::max());
    EXPECT_EQ(failure_of([] { api::json_integer(json(9.3e18), "x", 0, std::numeric_limits<std::int64_t>::max()); }).first,
              400);
}

TEST(IsoTimes, NothingBeforeYearOneIsATime) {
    EXPECT_EQ(domain::parse_iso_time("0001-01-01T00:00:00Z"), domain::earliest_time_us);
    EXPECT_EQ(domain::parse_iso_time("0001-01-01T00:30:00+01:00"), std::nullopt);
    EXPECT_EQ(domain::iso_time(domain::earliest_time_us), "0001-01-01T00:00:00.000000Z");
}

TEST(MemoryBudget, TicketsHoldTheirBytesUntilDestroyed) {
    util::memory_budget budget(100);
    auto a = budget.try_take(60);
    ASSERT_TRUE(a);
    EXPECT_EQ(budget.in_use(), 60u);
    EXPECT_FALSE(budget.try_take(41));
    auto b = budget.try_take(40);
    ASSERT_TRUE(b);
    EXPECT_FALSE(budget.try_take(1));
    a.reset();
    EXPECT_EQ(budget.in_use(), 40u);
    util::memory_budget::ticket moved = std::move(*b);
    b.reset();
    EXPECT_EQ(budget.in_use(), 40u) << "a moved ticket still holds its bytes";
    moved = util::memory_budget::ticket();
    EXPECT_EQ(budget.in_use(), 0u);
    // More than the whole budget: only alone.
    auto huge = budget.try_take(500);
    ASSERT_TRUE(huge);
    EXPECT_FALSE(budget.try_take(1));
    huge.reset();
    auto small = budget.try_take(1);
    ASSERT_TRUE(small);
    EXPECT_FALSE(budget.try_take(500));
}

TEST(AcceptBackoff, ExhaustionWaitsDoublingAndLogsOnceASecond) {
    http::accept_backoff backoff;
    const boost::system::error_code emfile(EMFILE, boost::system::system_category());
    const boost::system::error_code reset(ECONNABORTED, boost::system::system_category());
    auto t = std::chrono::steady_clock::time_point{} + 100s;
    auto first = backoff.failed(emfile, t);
    EXPECT_EQ(first.wait, 50ms);
    ASSERT_TRUE(first.log_line);
    EXPECT_NE(first.log_line->find("accepting again in 50 ms"), std::string::npos) << *first.log_line;
    std::vector<std::chrono::milliseconds> waits;
    int lines = 0;
    for (int i = 0; i < 8; ++i) {
        t += 100ms;
        auto d = backoff.failed(emfile, t);
        waits.push_back(d.wait);
        if (d.log_line) ++lines;
    }
    EXPECT_EQ(waits, (std::vector<std::chrono::milliseconds>{100ms, 200ms, 400ms, 800ms, 1000ms, 1000ms, 1000ms, 1000ms}));
    EXPECT_EQ(lines, 0) << "within a second of the last line";
    t += 1s;
    auto later = backoff.failed(emfile, t);
    ASSERT_TRUE(later.log_line);
    EXPECT_NE(later.log_line->find("(9 times since the last report)"), std::string::npos) << *later.log_line;
    backoff.succeeded();
    EXPECT_EQ(backoff.failed(emfile, t + 2s).wait, 50ms);
    EXPECT_EQ(backoff.failed(reset, t + 4s).wait, 0ms) << "a reset connection is no reason to wait";
    EXPECT_TRUE(http::accept_backoff::exhausted({ENFILE, boost::system::system_category()}));
    EXPECT_TRUE(http::accept_backoff::exhausted({ENOBUFS, boost::system::system_category()}));
    EXPECT_TRUE(http::accept_backoff::exhausted({ENOMEM, boost::system::system_category()}));
}

TEST(CorsOrigins, TheSettingIsOriginsOrAStar) {
    EXPECT_EQ(config::parse_cors_origins(""), std::vector<std::string>{});
    EXPECT_EQ(config::parse_cors_origins(" HTTPS://App.Example , http://localhost:3000,https://app.example"),
              (std::vector<std::string>{"https://app.example", "http://localhost:3000"}));
    EXPECT_EQ(config::parse_cors_origins("*"), std::vector<std::string>{"*"});
    EXPECT_EQ(config::parse_cors_origins("http://[::1]:8080"), std::vector<std::string>{"http://[::1]:8080"});
    for (const char* bad : {"ftp://x", "https://app.example/", "app.example", "https://", "http://a:b", "*,http://a",
                            "http://a b", "null"})
        EXPECT_THROW(config::parse_cors_origins(bad), std::invalid_argument) << bad;
}

TEST(CorsPolicy, OwnOriginAndListedOnesAreAdmitted) {
    const http::cors_policy none;
    EXPECT_TRUE(none.admits("", "broker:6632"));                         // curl, server-side clients
    EXPECT_TRUE(none.admits("http://broker:6632", "broker:6632"));        // the dashboard
    EXPECT_FALSE(none.admits("https://broker:6632", "broker:6632"));       // not the listener's scheme
    const http::cors_policy tls({}, "https");
    EXPECT_TRUE(tls.admits("https://Broker.example", "broker.example"));  // TLS on 443
    EXPECT_FALSE(tls.admits("http://broker.example", "broker.example"));
    EXPECT_FALSE(none.admits("http://evil.example", "broker:6632"));
    EXPECT_FALSE(none.admits("null", "broker:6632"));
    EXPECT_FALSE(none.admits("http://broker:6632", ""));
    EXPECT_EQ(none.allow_origin("http://broker:6632"), "");
    const http::cors_policy listed({"https://app.example"});
    EXPECT_TRUE(listed.admits("https://APP.example", "broker:6632"));
    EXPECT_EQ(listed.allow_origin("https://app.example"), "https://app.example");
    EXPECT_FALSE(listed.admits("https://app.example.evil", "broker:6632"));
    const http::cors_policy any({"*"});
    EXPECT_TRUE(any.admits("http://evil.example", "broker:6632"));
    EXPECT_EQ(any.allow_origin("http://evil.example"), "*");
}

TEST(CorsPolicy, WithAuthOffABrowserMustAddressTheBrokerByItsOwnName) {
    const http::cors_policy open({}, "http", std::vector<std::string>{"broker.test"});
    for (const char* host : {"127.0.0.1:6632", "[::1]:6632", "10.0.0.7", "LocalHost:6632", "broker.test:6632"})
        EXPECT_EQ(open.refusal(std::string("http://") + host, host, true), "") << host;
    EXPECT_NE(open.refusal("http://evil.example:6632", "evil.example:6632", true).find("is not a name of this broker"),
              std::string::npos);
    EXPECT_NE(open.refusal("", "evil.example:6632", true), "");  // Sec-Fetch-Site without Origin
    EXPECT_NE(open.refusal("", "", true), "");                    // a browser request without Host
    EXPECT_EQ(open.refusal("", "evil.example:6632", false), "");  // curl, SDKs, load balancers
    EXPECT_NE(open.refusal("http://evil.example", "127.0.0.1:6632", true).find("QUEEN_CORS_ORIGINS"),
              std::string::npos);
    const http::cors_policy any_host({}, "http", std::vector<std::string>{"*"});
    EXPECT_EQ(any_host.refusal("http://queen.example", "queen.example", true), "");
    const http::cors_policy auth_on(std::vector<std::string>{});  // no host rule: tokens admit requests
    EXPECT_EQ(auth_on.refusal("http://queen.example", "queen.example", true), "");
}

TEST(CorsPolicy, AllowedHostsAreHostNamesOrAStar) {
    EXPECT_EQ(config::parse_allowed_hosts(" Queen.Example ,broker-1,queen.example"),
              (std::vector<std::string>{"queen.example", "broker-1"}));
    EXPECT_EQ(config::parse_allowed_hosts("*"), std::vector<std::string>{"*"});
    EXPECT_TRUE(config::parse_allowed_hosts("").empty());
    for (const char* bad : {"queen.example:6632", "http://queen.example", "a b", "*,queen.example", "[::1]"})
        EXPECT_THROW(config::parse_allowed_hosts(bad), std::invalid_argument) << bad;
}

}  // namespace
}  // namespace queen
