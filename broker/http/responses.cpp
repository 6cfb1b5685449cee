#include "http/responses.hpp"

#include "render/json_writer.hpp"

namespace queen::http {

void add_common_headers(response& res) {
    res.set(bhttp::field::server, "queen");
}

response json_text(bhttp::status status, std::string body, unsigned version) {
    response res{status, version};
    res.set(bhttp::field::content_type, "application/json");
    res.body() = std::move(body);
    res.prepare_payload();
    return res;
}

response no_content(unsigned version) {
    response res{bhttp::status::no_content, version};
    return res;
}

response error(bhttp::status status, const std::string& message, unsigned version) {
    render::json_writer out;
    out.begin_object().field("error", message).end_object();
    return json_text(status, out.take(), version);
}

}  // namespace queen::http
