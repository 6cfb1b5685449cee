#pragma once
// One GET of a JWKS URL (JWT_JWKS_URL) within a time limit.
#include <utility>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <string>

namespace queen::auth {

// The largest JWKS document accepted.
inline constexpr std::size_t max_jwks_bytes = 1u << 20;

// The body of a 200 answer to GET url (http:// or https://host[:port]/path; https verifies the
// server's certificate against OpenSSL's default roots and the URL's host); throws std::runtime_error
// naming what failed (for the log only) on a bad URL, a network failure, another status, a
// body over max_jwks_bytes, or when `timeout` passes between connecting and the last byte
// of the answer.
boost::asio::awaitable<std::string> fetch_jwks(boost::asio::any_io_executor executor, const std::string& url,
                                               std::chrono::milliseconds timeout);

}  // namespace queen::auth
