#include "api/shared/failure_answer.hpp"

#include "api/shared/api_error.hpp"
#include "db/pg_error.hpp"
#include "log/log.hpp"

namespace queen::api {

namespace {

http::failure_answer domain(const api_error& e) {
    return {status_of(e.code()), e.what(), e.retry_after_seconds()};
}

}  // namespace

http::failure_answer answer_failure(std::exception_ptr failure, const http::request& req) noexcept {
    try {
        const std::string what = std::string(req.method_string()) + " " + std::string(req.target());
        try {
            std::rethrow_exception(failure);
        } catch (const api_error& e) {
            return domain(e);
        } catch (const db::pg_error& e) {
            if (e.kind() == db::pg_error_kind::raised) return domain(from_procedure(e.sqlstate(), e.what()));
            if (e.kind() == db::pg_error_kind::connection_lost) {
                log::warn("{}: database unavailable: {}", what, e.what());
                return {http::bhttp::status::service_unavailable, "database unavailable", 1};
            }
            if (e.kind() == db::pg_error_kind::timed_out) {
                // The server cancelled and rolled back the statement; the client may retry.
                log::warn("{}: database statement timed out: {}", what, e.what());
                return {http::bhttp::status::service_unavailable, "database statement timed out", 1};
            }
            log::error("{}: database error {}: {}", what, e.sqlstate(), e.what());
        } catch (const std::exception& e) {
            log::error("{}: unexpected failure: {}", what, e.what());
        } catch (...) {
            log::error("{}: unexpected failure of unknown type", what);
        }
    } catch (...) {
        // Logging itself failed (out of memory): the answer below needs nothing.
    }
    return {};
}

}  // namespace queen::api
