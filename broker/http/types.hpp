#pragma once
// HTTP types shared by the server, the router and the handlers.
#include <utility>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http.hpp>

#include "domain/tenant_scope.hpp"
#include "http/client_presence.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace queen::http {

namespace bhttp = boost::beast::http;
using request = bhttp::request<bhttp::string_body>;
using response = bhttp::response<bhttp::string_body>;

// What a handler sees of one request.
struct request_context {
    const request& req;
    std::vector<std::string> path_params;      // percent-decoded, in pattern order
    std::map<std::string, std::string> query;  // percent-decoded; last value wins
    client_presence& client;                   // to notice a client that goes away
    boost::asio::any_io_executor executor;     // the connection's strand
    // Called when the response could not be written (the client is gone).
    std::function<void()> on_write_failed;
    // Time the handler spent parked (a long-poll's wait), left out of the request's latency.
    std::chrono::steady_clock::duration parked{};
    // The validated token's "sub" (auth on, a token with a string sub), stamped on pushed
    // messages as producerSub; none otherwise.
    std::optional<std::string> subject;
    // The caller may see what only admin may: auth is off, or its token has the admin level.
    // Set with subject when the request is admitted, before its body is read.
    bool caller_admin = true;
    // The tenant whose queues the request sees (docs/tenancy.md); tenancy off by default. Set
    // when the request is admitted.
    domain::tenant_scope tenant;

    // Query value or nullptr.
    const std::string* query_value(const std::string& key) const {
        auto it = query.find(key);
        return it == query.end() ? nullptr : &it->second;
    }
};

}  // namespace queen::http
