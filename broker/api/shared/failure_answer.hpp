#pragma once
// The one place that turns a handler's exception into an answer (two tiers: domain errors, unexpected failures):
// domain errors (api_error, and errors raised by a procedure with SQLSTATE class QN) keep
// their status and message; a lost database is 503 with Retry-After; anything else is
// logged with its text and answered as a generic 500.
#include "http/router.hpp"

#include <exception>

namespace queen::api {

// Never throws.
http::failure_answer answer_failure(std::exception_ptr failure, const http::request& req) noexcept;

}  // namespace queen::api
