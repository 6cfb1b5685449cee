#pragma once
// The text a 400 gives for a request the HTTP parser refused: ours, naming the part that is
// wrong, never the library's message.
#include <boost/beast/core/error.hpp>

#include <string>

namespace queen::http {

// "malformed HTTP request: bad header field value" and the like.
std::string malformed_request_text(const boost::beast::error_code& ec);

}  // namespace queen::http
