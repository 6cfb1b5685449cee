#include "http/request_errors.hpp"

#include <boost/beast/http/error.hpp>

namespace queen::http {

namespace {

const char* what_is_wrong(const boost::beast::error_code& ec) {
    using boost::beast::http::error;
    if (ec.category() != boost::beast::http::make_error_code(error::bad_target).category()) return nullptr;
    switch (static_cast<error>(ec.value())) {
        case error::bad_line_ending:
            return "bad line ending";
        case error::bad_method:
            return "bad method";
        case error::bad_target:
            return "bad request target";
        case error::bad_version:
            return "bad HTTP version";
        case error::bad_field:
            return "bad header field name";
        case error::bad_value:
            return "bad header field value";
        case error::bad_content_length:
            return "bad Content-Length";
        case error::bad_transfer_encoding:
            return "bad Transfer-Encoding";
        case error::bad_chunk:
            return "bad chunk";
        case error::bad_chunk_extension:
            return "bad chunk extension";
        case error::bad_obs_fold:
            return "obsolete header line folding";
        default:
            return nullptr;
    }
}

}  // namespace

std::string malformed_request_text(const boost::beast::error_code& ec) {
    const char* what = what_is_wrong(ec);
    return what ? std::string("malformed HTTP request: ") + what : std::string("malformed HTTP request");
}

}  // namespace queen::http
