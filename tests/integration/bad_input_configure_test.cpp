// BadInput on the configure route (docs/http-api.md, "Conventions" and "What existing clients
// rely on"): bad bodies and option values (types, ranges, values past int64) are 400, and a
// request with one bad option applies none of the others.
//
// Every really wrong input is answered with the right 4xx and a JSON body {"error": "<message
// naming the problem>"} (valid UTF-8, without CORS headers for a client that sends no Origin),
// and NOTHING is written for a rejected request (asserted on the database for a unique queue
// name, case by case). The other BadInput routes: bad_input_*_test.cpp.
#include "bad_input_support.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace {

using namespace queen::test;
using namespace queen::test::bad_input_support;
using nlohmann::json;

}  // namespace

TEST(BadInput, ConfigureRejectsBadBodiesAndWritesNothing) {
    const std::string q = unique_name("bad-configure");
    const std::string q256 = q + std::string(256 - q.size(), 'x');
    auto with_options = [&](json options) { return json{{"queue", q}, {"options", options}}.dump(); };
    const std::vector<bad_case> cases{
        {"malformed JSON", "POST", "/api/v1/configure", "{\"queue\": \"" + q + "\",", 400, "malformed JSON"},
        {"body not an object", "POST", "/api/v1/configure", json::array({q}).dump(), 400, "JSON object"},
        {"queue missing", "POST", "/api/v1/configure", json{{"options", {{"leaseTime", 10}}}}.dump(), 400,
         "queue is required"},
        {"queue not a string", "POST", "/api/v1/configure", json{{"queue", 12}}.dump(), 400,
         "queue must be a string"},
        {"queue 256 bytes", "POST", "/api/v1/configure", json{{"queue", q256}}.dump(), 400, "queue is 256 bytes"},
        {"namespace not a string", "POST", "/api/v1/configure", json{{"queue", q}, {"namespace", 3}}.dump(), 400,
         "namespace must be a string"},
        {"options not an object", "POST", "/api/v1/configure", with_options(json::array({1})), 400,
         "options must be an object"},
        {"options a string", "POST", "/api/v1/configure", with_options("leaseTime=5"), 400,
         "options must be an object"},
        {"leaseTime a string", "POST", "/api/v1/configure", with_options({{"leaseTime", "x"}}), 400,
         "options.leaseTime must be an integer"},
        {"leaseTime a fraction", "POST", "/api/v1/configure", with_options({{"leaseTime", 1.5}}), 400,
         "options.leaseTime must be an integer"},
        {"retentionEnabled a number", "POST", "/api/v1/configure", with_options({{"retentionEnabled", 1}}), 400,
         "options.retentionEnabled must be a boolean"},
        {"deadLetterQueue a string", "POST", "/api/v1/configure", with_options({{"deadLetterQueue", "true"}}), 400,
         "options.deadLetterQueue must be a boolean"},
        {"leaseTime zero", "POST", "/api/v1/configure", with_options({{"leaseTime", 0}}), 400, "options.leaseTime"},
        {"retryLimit negative", "POST", "/api/v1/configure", with_options({{"retryLimit", -1}}), 400,
         "options.retryLimit"},
        {"retryDelay negative", "POST", "/api/v1/configure", with_options({{"retryDelay", -5}}), 400,
         "options.retryDelay"},
        // 2^64 - 10^6 is -10^6 read as a signed integer; doubles of 2^63 and more have no int64.
        {"priority wrapping", "POST", "/api/v1/configure",
         "{\"queue\":\"" + q + "\",\"options\":{\"priority\":18446744073708551616}}", 400,
         "options.priority must be between -1000000 and 1000000, got 18446744073708551616"},
        {"maxSize past int64", "POST", "/api/v1/configure", with_options({{"maxSize", 1e19}}), 400,
         "options.maxSize must be between"},
        {"ttl past int64", "POST", "/api/v1/configure", with_options({{"ttl", -9.3e18}}), 400,
         "options.ttl must be between"},
        // One valid option before a bad one: nothing of the request is applied.
        {"valid then invalid option", "POST", "/api/v1/configure",
         with_options({{"leaseTime", 10}, {"maxSize", -1}}), 400, "options.maxSize"},
    };
    run_cases(broker().port(), cases, {q, q256});
}
