#include "http/router.hpp"

#include "http/responses.hpp"
#include "http/url.hpp"

#include <algorithm>


namespace queen::http {
namespace {

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

// HEAD: the GET answer's headers, Content-Length included, with no body.
void without_body(response& res) {
    const auto length = res.body().size();
    res.body().clear();
    if (res.result() != bhttp::status::no_content && res.result() != bhttp::status::not_modified)
        res.content_length(length);
}

}  // namespace

void router::add(bhttp::verb method, std::string pattern, handler h, bool answers_head) {
    auto segments = split_pattern(pattern);
    routes_.push_back(
        route{method, std::move(pattern), std::move(segments), std::move(h), answers_head && method == bhttp::verb::get});
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

boost::asio::awaitable<response> router::dispatch(const request& req, client_presence& client,
                                                  boost::asio::any_io_executor executor, dispatch_info& info) const {
    response res = co_await answer(req, client, std::move(executor), info);
    if (req.method() == bhttp::verb::head) without_body(res);
    co_return res;
}

boost::asio::awaitable<response> router::answer(const request& req, client_presence& client,
                                                boost::asio::any_io_executor executor, dispatch_info& info) const {
    const unsigned version = req.version();
    auto target = parse_target(req.target());
    if (!target) co_return error(bhttp::status::bad_request, "malformed percent-escape in the request target", version);
    std::vector<std::string> segments;
    for (const auto& raw : target->segments) {
        auto decoded = percent_decode(raw, false);
        if (!decoded) co_return error(bhttp::status::bad_request, "malformed percent-escape in the request path", version);
        segments.push_back(std::move(*decoded));
    }

    std::vector<std::string> params;
    const route* found = nullptr;
    std::string allowed;
    for (const auto& r : routes_) {
        if (!match(r.pattern, segments, params)) continue;
        if (!allowed.empty()) allowed += ", ";
        allowed += std::string(bhttp::to_string(r.method));
        if (r.method == req.method() || (req.method() == bhttp::verb::head && r.answers_head)) {
            found = &r;
            break;
        }
    }
    if (req.method() == bhttp::verb::options) {
        response res = no_content(version);
        res.set(bhttp::field::access_control_allow_methods, "GET, POST, PUT, DELETE, OPTIONS");
        res.set(bhttp::field::access_control_allow_headers, "Content-Type, Authorization");
        res.set(bhttp::field::access_control_max_age, "86400");
        co_return res;
    }
    if (!found && allowed.empty()) found = fallback_for(req, segments);
    if (!found) {
        if (!allowed.empty()) {
            response res = error(bhttp::status::method_not_allowed,
                                 std::string("method ") + std::string(req.method_string()) + " is not allowed on " +
                                     std::string(req.target().substr(0, req.target().find('?'))),
                                 version);
            res.set(bhttp::field::allow, allowed);
            co_return res;
        }
        co_return error(bhttp::status::not_found, "no route for " + std::string(req.method_string()) + " " +
                                                      std::string(req.target().substr(0, req.target().find('?'))),
                        version);
    }
    // Re-match to collect this route's parameters (the loop may have matched others after).
    if (found == &fallback_) {
        params.clear();
    } else {
        match(found->pattern, segments, params);
    }
    info.route = found->path;
    request_context ctx{req, std::move(params), std::move(target->query), client, executor, {}, {}, {}};
    std::exception_ptr failure;
    response res;
    try {
        res = co_await found->h(ctx);
        info.on_write_failed = std::move(ctx.on_write_failed);
        info.parked = ctx.parked;
        res.version(version);
        co_return res;
    } catch (...) {
        failure = std::current_exception();
    }
    info.parked = ctx.parked;
    const failure_answer answer = map_failure_(failure, req);
    res = error(answer.status, answer.message, version);
    if (answer.retry_after_seconds > 0) res.set(bhttp::field::retry_after, std::to_string(answer.retry_after_seconds));
    co_return res;
}

}  // namespace queen::http
