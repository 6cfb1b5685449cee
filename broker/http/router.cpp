#include "http/router.hpp"

#include "http/responses.hpp"
#include "http/url.hpp"
#include "util/utf8.hpp"

#include <algorithm>

namespace queen::http {
namespace {

// Longest piece of a client's text (a path, an origin) echoed in an error.
constexpr std::size_t max_echo_bytes = 200;

std::vector<std::string> split_pattern(const std::string& pattern) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start < pattern.size()) {
        auto slash = pattern.find('/', start);
        auto end = slash == std::string::npos ? pattern.size() : slash;
        if (end > start) out.push_back(pattern.substr(start, end - start));
        if (slash == std::string::npos) break;
        start = slash + 1;
    }
    return out;
}

// Matches decoded segments against a pattern, collecting parameters.
bool match(const std::vector<std::string>& pattern, const std::vector<std::string>& segments,
           std::vector<std::string>& params) {
    if (pattern.size() != segments.size()) return false;
    params.clear();
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        if (!pattern[i].empty() && pattern[i][0] == ':') {
            params.push_back(segments[i]);
        } else if (pattern[i] != segments[i]) {
            return false;
        }
    }
    return true;
}

// The first decoded URL value (a path parameter or a query value) that is not UTF-8, as the
// refusal's text "<name> is not valid UTF-8"; empty when all are.
std::string invalid_url_value(const std::vector<std::string>& pattern, const std::vector<std::string>& params,
                              const std::map<std::string, std::string>& query) {
    std::size_t p = 0;
    for (const auto& segment : pattern) {
        if (segment.empty() || segment[0] != ':') continue;
        if (p < params.size() && util::first_invalid_utf8(params[p])) return segment.substr(1) + " is not valid UTF-8";
        ++p;
    }
    for (const auto& [key, value] : query) {
        if (util::first_invalid_utf8(key)) return "a query parameter name is not valid UTF-8";
        if (util::first_invalid_utf8(value)) return key + " is not valid UTF-8";
    }
    return {};
}

// HEAD: the GET answer's headers, Content-Length included, with no body.
void without_body(response& res) {
    const auto length = res.body().size();
    res.body().clear();
    if (res.result() != bhttp::status::no_content && res.result() != bhttp::status::not_modified)
        res.content_length(length);
}

// Whether a request's header announces a body: a Content-Length above 0, or a
// Transfer-Encoding (whose body may be empty, but is not read to find out).
bool announces_body(const request& header) {
    if (header.find(bhttp::field::transfer_encoding) != header.end()) return true;
    const std::string_view length = header[bhttp::field::content_length];
    return length.find_first_not_of('0') != std::string_view::npos;
}

// The path of a target, made safe to echo.
std::string echoed_path(const request& req) {
    const std::string_view target = req.target();
    return util::printable_echo(target.substr(0, target.find('?')), max_echo_bytes);
}

}  // namespace

void router::add(bhttp::verb method, std::string pattern, admitter admit, handler h, bool answers_head) {
    auto segments = split_pattern(pattern);
    const bool takes_body = method == bhttp::verb::post || method == bhttp::verb::put || method == bhttp::verb::patch;
    routes_.push_back(route{method, std::move(pattern), std::move(segments), std::move(admit), std::move(h),
                            answers_head && method == bhttp::verb::get, takes_body});
}

void router::set_fallback(std::vector<std::string> reserved, handler h) {
    reserved_ = std::move(reserved);
    fallback_.h = std::move(h);
}

const router::route* router::fallback_for(const request& req, const std::vector<std::string>& segments) const {
    if (!fallback_.h) return nullptr;
    if (req.method() != bhttp::verb::get && req.method() != bhttp::verb::head) return nullptr;
    if (!segments.empty() && std::find(reserved_.begin(), reserved_.end(), segments.front()) != reserved_.end())
        return nullptr;
    return &fallback_;
}

response router::failure_response(std::exception_ptr failure, const request& req) const {
    const failure_answer answer = map_failure_(failure, req);
    response res = error(answer.status, answer.message);
    if (answer.retry_after_seconds > 0) res.set(bhttp::field::retry_after, std::to_string(answer.retry_after_seconds));
    return res;
}

void router::finish(response& res, const request& req, const std::string& allow_origin) const {
    res.version(req.version());
    if (!allow_origin.empty()) {
        res.set(bhttp::field::access_control_allow_origin, allow_origin);
        if (allow_origin != "*") res.set(bhttp::field::vary, "Origin");
    }
    if (req.method() == bhttp::verb::head) without_body(res);
}

boost::asio::awaitable<router::admission> router::admit(const request& header, client_presence& client,
                                                        boost::asio::any_io_executor executor) const {
    admission out;
    co_await decide(header, client, std::move(executor), out);
    if (out.answer) finish(*out.answer, header, out.allow_origin_);
    co_return out;
}

boost::asio::awaitable<void> router::decide(const request& header, client_presence& client,
                                            boost::asio::any_io_executor executor, admission& out) const {
    const std::string_view origin = header[bhttp::field::origin];
    const bool from_browser = !origin.empty() || header.find("Sec-Fetch-Site") != header.end();
    if (auto why = cors_.refusal(origin, header[bhttp::field::host], from_browser); !why.empty()) {
        out.answer = error(bhttp::status::forbidden, why);
        co_return;
    }
    out.allow_origin_ = cors_.allow_origin(origin);
    auto target = parse_target(header.target());
    if (!target) {
        out.answer = error(bhttp::status::bad_request, "malformed percent-escape in the request target");
        co_return;
    }
    std::vector<std::string> segments;
    for (const auto& raw : target->segments) {
        auto decoded = percent_decode(raw, false);
        if (!decoded) {
            out.answer = error(bhttp::status::bad_request, "malformed percent-escape in the request path");
            co_return;
        }
        segments.push_back(std::move(*decoded));
    }

    std::vector<std::string> params;
    const route* found = nullptr;
    std::string allowed;
    for (const auto& r : routes_) {
        if (!match(r.pattern, segments, params)) continue;
        if (!allowed.empty()) allowed += ", ";
        allowed += std::string(bhttp::to_string(r.method));
        if (r.method == header.method() || (header.method() == bhttp::verb::head && r.answers_head)) {
            found = &r;
            break;
        }
    }
    if (header.method() == bhttp::verb::options) {
        out.answer = no_content();
        out.answer->set(bhttp::field::access_control_allow_methods, "GET, POST, PUT, DELETE, OPTIONS");
        out.answer->set(bhttp::field::access_control_allow_headers, "Content-Type, Authorization");
        out.answer->set(bhttp::field::access_control_max_age, "86400");
        co_return;
    }
    if (!found && allowed.empty()) found = fallback_for(header, segments);
    if (!found) {
        if (!allowed.empty()) {
            out.answer = error(bhttp::status::method_not_allowed, "method " + std::string(header.method_string()) +
                                                                      " is not allowed on " + echoed_path(header));
            out.answer->set(bhttp::field::allow, allowed);
        } else {
            out.answer = error(bhttp::status::not_found,
                               "no route for " + std::string(header.method_string()) + " " + echoed_path(header));
        }
        co_return;
    }
    // Re-match to collect this route's parameters (the loop may have matched others after).
    if (found == &fallback_)
        params.clear();
    else
        match(found->pattern, segments, params);
    out.route_name = found->path;
    if (auto why = invalid_url_value(found->pattern, params, target->query); !why.empty()) {
        out.answer = error(bhttp::status::bad_request, why);
        co_return;
    }
    // A body nothing reads is refused unread, so that no route holds a client's bytes for free.
    if (!found->takes_body && announces_body(header)) {
        out.answer = error(bhttp::status::bad_request,
                           std::string(header.method_string()) + " " + echoed_path(header) + " takes no request body");
        co_return;
    }
    if (found->admit) {
        request_context ctx{header, params, target->query, client, executor, {}, {}, {}, true, {}};
        std::exception_ptr failure;
        try {
            co_await found->admit(ctx);
        } catch (...) {
            failure = std::current_exception();
        }
        if (failure) {
            out.answer = failure_response(failure, header);
            co_return;
        }
        out.subject_ = std::move(ctx.subject);
        out.caller_admin_ = ctx.caller_admin;
        out.tenant_ = std::move(ctx.tenant);
    }
    out.found_ = found;
    out.params_ = std::move(params);
    out.query_ = std::move(target->query);
}

boost::asio::awaitable<response> router::dispatch(const request& req, admission admitted, client_presence& client,
                                                  boost::asio::any_io_executor executor, dispatch_info& info) const {
    request_context ctx{req,
                        std::move(admitted.params_),
                        std::move(admitted.query_),
                        client,
                        executor,
                        {},
                        {},
                        std::move(admitted.subject_),
                        admitted.caller_admin_,
                        std::move(admitted.tenant_)};
    std::exception_ptr failure;
    response res;
    try {
        res = co_await admitted.found_->h(ctx);
        info.on_write_failed = std::move(ctx.on_write_failed);
    } catch (...) {
        failure = std::current_exception();
    }
    info.parked = ctx.parked;
    if (failure) res = failure_response(failure, req);
    finish(res, req, admitted.allow_origin_);
    co_return res;
}

}  // namespace queen::http
