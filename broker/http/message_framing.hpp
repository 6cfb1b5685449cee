#pragma once
// How a request's body is framed, checked before anything is read (RFC 9112, section 6): the
// broker decodes only the chunked transfer coding, so a request it cannot frame exactly as the
// client meant is refused and its connection closed, never served from a guessed length.
#include "http/types.hpp"

#include <optional>
#include <string>

namespace queen::http {

// The 400 text for a request whose framing the broker refuses, or nullopt when it frames it:
// a Transfer-Encoding in an HTTP/1.0 request, a coding other than a single final `chunked`,
// or a Transfer-Encoding beside a Content-Length.
std::optional<std::string> framing_refusal(const bhttp::request_header<>& header);

}  // namespace queen::http
