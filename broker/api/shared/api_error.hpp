#pragma once
// Domain errors: expected outcomes that a handler reports to the client. The only place
// that maps them to HTTP statuses is status_of().
#include <boost/beast/http/status.hpp>

#include <stdexcept>
#include <string>

namespace queen::api {

enum class error_code {
    bad_request,         // 400
    unauthorized,        // 401
    forbidden,           // 403
    not_found,           // 404
    method_not_allowed,  // 405
    conflict,            // 409
    payload_too_large,   // 413
    too_many_requests,   // 429 (with Retry-After)
    unavailable,         // 503 (with Retry-After)
    not_implemented,     // 501 (a route not served over shards yet)
};

boost::beast::http::status status_of(error_code code);

// Thrown by handlers for a domain error; caught once per request by the router.
class api_error : public std::runtime_error {
public:
    api_error(error_code code, std::string message, int retry_after_seconds = 0)
        : std::runtime_error(std::move(message)), code_(code), retry_after_(retry_after_seconds) {}
    error_code code() const noexcept { return code_; }
    int retry_after_seconds() const noexcept { return retry_after_; }

private:
    error_code code_;
    int retry_after_;
};

// A domain error raised by a stored procedure (SQLSTATE class QN): QN429 → 429,
// QN404 → 404, QN409 → 409, QN413 → 413, QN501 → 501, QN503 → 503 (a shard unreachable), any other QN
// code → 400. The message is the procedure's own.
api_error from_procedure(const std::string& sqlstate, const std::string& message);

inline api_error bad_request(std::string message) {
    return api_error(error_code::bad_request, std::move(message));
}

}  // namespace queen::api
