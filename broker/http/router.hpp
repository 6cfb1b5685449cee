#pragma once
// The endpoint table: (method, path pattern) -> handler. Tells an unknown route (404) from a
// known route with the wrong method (405), answers OPTIONS (CORS preflight), answers HEAD for
// the GET routes that allow it, hands unmatched GETs outside reserved prefixes to a fallback
// (the dashboard's page), and is the one place where domain errors become statuses and
// unexpected failures become a logged 500.
#include "http/types.hpp"

#include <utility>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace queen::http {

using handler = std::function<boost::asio::awaitable<response>(request_context&)>;

// How a handler's exception is answered. The layer that knows the error types (api/) maps
// them, and logs what the client must not see; the router only renders the answer.
struct failure_answer {
    bhttp::status status = bhttp::status::internal_server_error;
    std::string message = "internal error";
    int retry_after_seconds = 0;  // > 0: a Retry-After header
};
using failure_mapper = std::function<failure_answer(std::exception_ptr, const request&)>;

// What dispatch tells its caller about the request beyond the response.
struct dispatch_info {
    std::string_view route = "unmatched";             // the matched pattern as registered, "fallback" for the fallback
    std::chrono::steady_clock::duration parked{};     // time the handler spent parked
    std::function<void()> on_write_failed;            // called when the response could not be written
};

class router {
public:
    explicit router(failure_mapper map_failure) : map_failure_(std::move(map_failure)) {}

    // pattern: "/api/v1/pop/queue/:queue/partition/:partition"; ":name" matches one segment.
    // answers_head: a GET route that also answers HEAD (its headers, no body); only for GETs
    // without side effects.
    void add(bhttp::verb method, std::string pattern, handler h, bool answers_head = false);

    // A GET or HEAD that no route matches, whose first path segment is none of `reserved`, is
    // answered by h (as HEAD without a body); anything else unmatched stays a 404.
    void set_fallback(std::vector<std::string> reserved, handler h);

    // Answers one request; never throws.
    boost::asio::awaitable<response> dispatch(const request& req, client_presence& client,
                                              boost::asio::any_io_executor executor, dispatch_info& info) const;

private:
    struct route {
        bhttp::verb method;
        std::string path;                  // the pattern as registered
        std::vector<std::string> pattern;  // literal segments, or ":name"
        handler h;
        bool answers_head = false;
    };
    // dispatch() before HEAD's body is dropped.
    boost::asio::awaitable<response> answer(const request& req, client_presence& client,
                                            boost::asio::any_io_executor executor, dispatch_info& info) const;
    // The route for a request that no route matches, or nullptr.
    const route* fallback_for(const request& req, const std::vector<std::string>& segments) const;

    std::vector<route> routes_;
    std::vector<std::string> reserved_;
    route fallback_{bhttp::verb::get, "fallback", {}, nullptr, true};
    failure_mapper map_failure_;
};

}  // namespace queen::http
