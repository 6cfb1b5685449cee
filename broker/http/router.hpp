#pragma once
// The endpoint table: (method, path pattern) -> handler. Tells an unknown route (404) from a
// known route with the wrong method (405), answers OPTIONS (CORS preflight), and is the one
// place where domain errors become statuses and unexpected failures become a logged 500.
#include "http/types.hpp"

#include <utility>
#include <boost/asio/awaitable.hpp>

#include <functional>
#include <string>
#include <vector>

namespace queen::http {

using handler = std::function<boost::asio::awaitable<response>(request_context&)>;

class router {
public:
    // pattern: "/api/v1/pop/queue/:queue/partition/:partition"; ":name" matches one segment.
    void add(bhttp::verb method, std::string pattern, handler h);

    // Answers one request; never throws.
    boost::asio::awaitable<response> dispatch(const request& req, client_presence& client,
                                              boost::asio::any_io_executor executor,
                                              std::function<void()>& on_write_failed) const;

private:
    struct route {
        bhttp::verb method;
        std::vector<std::string> pattern;  // literal segments, or ":name"
        handler h;
    };
    std::vector<route> routes_;
};

}  // namespace queen::http
