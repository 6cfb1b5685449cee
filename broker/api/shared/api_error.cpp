#include "api/shared/api_error.hpp"

#include "db/pg_error.hpp"

namespace queen::api {

boost::beast::http::status status_of(error_code code) {
    using boost::beast::http::status;
    switch (code) {
        case error_code::bad_request:
            return status::bad_request;
        case error_code::unauthorized:
            return status::unauthorized;
        case error_code::forbidden:
            return status::forbidden;
        case error_code::not_found:
            return status::not_found;
        case error_code::method_not_allowed:
            return status::method_not_allowed;
        case error_code::conflict:
            return status::conflict;
        case error_code::payload_too_large:
            return status::payload_too_large;
        case error_code::too_many_requests:
            return status::too_many_requests;
        case error_code::unavailable:
            return status::service_unavailable;
        case error_code::not_implemented:
            return status::not_implemented;
    }
    return status::internal_server_error;
}

api_error from_procedure(const std::string& sqlstate, const std::string& message) {
    if (sqlstate == "QN429") return api_error(error_code::too_many_requests, message, 1);
    if (sqlstate == "QN404") return api_error(error_code::not_found, message);
    if (sqlstate == "QN409") return api_error(error_code::conflict, message);
    if (sqlstate == "QN413") return api_error(error_code::payload_too_large, message);
    if (sqlstate == "QN501") return api_error(error_code::not_implemented, message);
    if (sqlstate == db::sqlstate_shard_unreachable || sqlstate == db::sqlstate_shard_moving)
        return api_error(error_code::unavailable, message, 1);
    return api_error(error_code::bad_request, message);
}

}  // namespace queen::api
