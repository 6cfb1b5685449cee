#pragma once
// Building responses: JSON bodies, the body-less 204, errors.
#include "http/types.hpp"

#include <string>

namespace queen::http {

// A JSON response with the given status; body is JSON text (written with render::json_writer).
response json_text(bhttp::status status, std::string body, unsigned version = 11);
// 204 with no body and no Content-Length.
response no_content(unsigned version = 11);
// {"error": message}
response error(bhttp::status status, const std::string& message, unsigned version = 11);
// Headers every response carries (Server); CORS headers are the router's (http/cors_policy.hpp).
void add_common_headers(response& res);

}  // namespace queen::http
