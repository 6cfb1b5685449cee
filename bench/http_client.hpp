#pragma once
// One keep-alive HTTP/1.1 connection driven by Asio coroutines (Beast), one request at a
// time. Lives on its own strand; cancel() may be called from any thread.
#include <utility>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/verb.hpp>

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

namespace queen::bench {

struct http_result {
    boost::system::error_code ec;  // transport error (then status is 0)
    unsigned status = 0;
    std::string body;
    std::string retry_after;  // Retry-After header, if any
    bool ok() const { return !ec && status >= 200 && status < 300; }
    // One line describing a failed request: transport error or status and a body excerpt.
    std::string describe() const;
};

// Percent-encodes a path segment or query value (RFC 3986 unreserved characters stay).
std::string url_encode(const std::string& s);

class http_client {
public:
    // `headers` are sent with every request (besides Host, User-Agent and Content-Type).
    http_client(boost::asio::any_io_executor strand, boost::asio::ip::tcp::resolver::results_type endpoints,
                std::string host_header, std::vector<std::pair<std::string, std::string>> headers = {});

    boost::asio::any_io_executor get_executor() { return stream_.get_executor(); }

    // Sends one request and reads its answer; connects (again) when needed. Never throws for
    // network or HTTP errors: they come back in the result.
    boost::asio::awaitable<http_result> request(boost::beast::http::verb verb, const std::string& target,
                                                const std::string& body, std::chrono::milliseconds timeout);

    // Sleeps; returns early when cancelled.
    boost::asio::awaitable<void> sleep(std::chrono::milliseconds d);

    // Sleeps until t (returns at once when t has passed); returns early when cancelled.
    boost::asio::awaitable<void> sleep_until(std::chrono::steady_clock::time_point t);

    // Aborts the request or sleep in progress and every later one (thread-safe).
    void cancel();
    bool cancelled() const { return cancelled_.load(); }

    std::size_t reconnects() const { return connects_ > 0 ? connects_ - 1 : 0; }

private:
    void close();

    boost::beast::tcp_stream stream_;
    boost::asio::steady_timer timer_;
    boost::asio::ip::tcp::resolver::results_type endpoints_;
    std::string host_header_;
    std::vector<std::pair<std::string, std::string>> headers_;
    boost::beast::flat_buffer buffer_;
    bool connected_ = false;
    std::size_t connects_ = 0;
    std::atomic<bool> cancelled_{false};
};

}  // namespace queen::bench
