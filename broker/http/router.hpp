#pragma once
// The endpoint table: (method, path pattern) -> handler. Tells an unknown route (404) from a
// known route with the wrong method (405), answers OPTIONS (CORS preflight), answers HEAD for
// the GET routes that allow it, hands unmatched GETs outside reserved prefixes to a fallback
// (the dashboard's page), and is the one place where domain errors become statuses and
// unexpected failures become a logged 500.
//
// A request passes two steps. admit() sees only the request line and header fields: it
// refuses browser requests the policy does not allow (http/cors_policy.hpp), malformed targets
// and URL values that are not UTF-8, answers what needs no body (404, 405, OPTIONS), refuses a
// body sent to a route that reads none (GET, HEAD, DELETE: 400), and runs the route's admitter
// (authentication, rate limits), all before any byte of the body is read. dispatch() then
// runs the admitted route's handler on the whole request.
#include "http/cors_policy.hpp"
#include "http/types.hpp"

#include <utility>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace queen::http {

using handler = std::function<boost::asio::awaitable<response>(request_context&)>;
// Admits a request from its header alone (the body is not read yet, and rc.req has none):
// returns to admit it, and may set rc.subject, rc.caller_admin and rc.tenant; throws to refuse it (the
// exception is answered as a handler's would be).
using admitter = std::function<boost::asio::awaitable<void>(request_context&)>;

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
    std::chrono::steady_clock::duration parked{};  // time the handler spent parked
    std::function<void()> on_write_failed;         // called when the response could not be written
};

class router {
    struct route;

public:
    // What admit() decided, carried to dispatch() of the same request.
    class admission {
    public:
        // Set: the request is answered with this and its body is never read.
        std::optional<response> answer;
        // The matched pattern as registered, "fallback" for the fallback, "unmatched" for none.
        std::string_view route_name = "unmatched";

    private:
        friend class router;
        const route* found_ = nullptr;
        std::vector<std::string> params_;
        std::map<std::string, std::string> query_;
        std::optional<std::string> subject_;
        bool caller_admin_ = true;
        domain::tenant_scope tenant_;
        std::string allow_origin_;
    };

    router(failure_mapper map_failure, cors_policy cors)
        : map_failure_(std::move(map_failure)), cors_(std::move(cors)) {}

    // pattern: "/api/v1/pop/queue/:queue/partition/:partition"; ":name" matches one segment.
    // admit: null admits every request. answers_head: a GET route that also answers HEAD (its
    // headers, no body); only for GETs without side effects.
    void add(bhttp::verb method, std::string pattern, admitter admit, handler h, bool answers_head = false);

    // A GET or HEAD that no route matches, whose first path segment is none of `reserved`, is
    // answered by h (as HEAD without a body) without an admitter; anything else unmatched stays
    // a 404.
    void set_fallback(std::vector<std::string> reserved, handler h);

    // Decides from `header` (a request whose body is not read) whether and where it is served;
    // never throws.
    boost::asio::awaitable<admission> admit(const request& header, client_presence& client,
                                            boost::asio::any_io_executor executor) const;

    // Answers an admitted request (admission without an answer) whose body is read; never throws.
    boost::asio::awaitable<response> dispatch(const request& req, admission admitted, client_presence& client,
                                              boost::asio::any_io_executor executor, dispatch_info& info) const;

private:
    struct route {
        bhttp::verb method;
        std::string path;                  // the pattern as registered
        std::vector<std::string> pattern;  // literal segments, or ":name"
        admitter admit;
        handler h;
        bool answers_head = false;
        bool takes_body = false;  // POST, PUT and PATCH routes read a body; the others refuse one
    };
    // admit() before the answer's CORS headers are set and HEAD's body is dropped.
    boost::asio::awaitable<void> decide(const request& header, client_presence& client,
                                        boost::asio::any_io_executor executor, admission& out) const;
    // The route for a request that no route matches, or nullptr.
    const route* fallback_for(const request& req, const std::vector<std::string>& segments) const;
    // A handler's or admitter's exception as an answer.
    response failure_response(std::exception_ptr failure, const request& req) const;
    // The answer's version, CORS header and, for HEAD, its body dropped.
    void finish(response& res, const request& req, const std::string& allow_origin) const;

    std::vector<route> routes_;
    std::vector<std::string> reserved_;
    route fallback_{bhttp::verb::get, "fallback", {}, nullptr, nullptr, true, false};
    failure_mapper map_failure_;
    cors_policy cors_;
};

}  // namespace queen::http
