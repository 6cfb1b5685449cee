// GET / (and every client-side route of the dashboard) and GET /assets/:file: the dashboard's
// embedded files (web/web_bundle.hpp). The page is revalidated on every load; assets carry a
// content hash in their names and are cached for a year.
#include "api/observability/handlers.hpp"
#include "http/responses.hpp"
#include "web/web_bundle.hpp"

#include <string>

namespace queen::api {
namespace {

// 200 with the file (304 when the client's If-None-Match names its ETag).
http::response serve(const http::request& req, const web::web_file& file, std::string_view cache_control) {
    const bool fresh = req[http::bhttp::field::if_none_match] == file.etag;
    http::response res{fresh ? http::bhttp::status::not_modified : http::bhttp::status::ok, req.version()};
    res.set(http::bhttp::field::etag, file.etag);
    res.set(http::bhttp::field::cache_control, cache_control);
    if (fresh) return res;
    res.set(http::bhttp::field::content_type, web::content_type_of(file.path));
    res.body() = std::string(file.body);
    res.prepare_payload();
    return res;
}

}  // namespace

// GET /: index.html, for any client-side route too (the router's fallback).
boost::asio::awaitable<http::response> handle_dashboard_page(broker_context&, http::request_context& rc) {
    const web::web_file* page = web::find_web_file("index.html");
    if (!page) co_return http::error(http::bhttp::status::not_found, "the dashboard is not built into this broker");
    co_return serve(rc.req, *page, "no-cache");
}

// GET /assets/:file: one built asset; 404 for a name that is not one.
boost::asio::awaitable<http::response> handle_dashboard_asset(broker_context&, http::request_context& rc) {
    const web::web_file* file = web::find_web_file("assets/" + rc.path_params.at(0));
    if (!file) co_return http::error(http::bhttp::status::not_found, "Asset not found");
    co_return serve(rc.req, *file, "public, max-age=31536000, immutable");
}

}  // namespace queen::api
