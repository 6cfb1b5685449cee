#include "api/openapi.hpp"

#include "render/json_writer.hpp"

#include <map>
#include <vector>

namespace queen::api {

namespace {

// "/api/v1/pop/queue/:queue" -> "/api/v1/pop/queue/{queue}", and the parameter names.
std::string openapi_path(std::string_view path, std::vector<std::string>& params) {
    std::string out;
    std::size_t i = 0;
    while (i < path.size()) {
        if (path[i] == ':' && i > 0 && path[i - 1] == '/') {
            std::size_t end = path.find('/', i);
            if (end == std::string_view::npos) end = path.size();
            params.emplace_back(path.substr(i + 1, end - i - 1));
            out += '{';
            out += params.back();
            out += '}';
            i = end;
        } else {
            out += path[i++];
        }
    }
    return out;
}

// "get" for GET; the keys OpenAPI uses for operations.
std::string method_key(http::bhttp::verb v) {
    std::string m(http::bhttp::to_string(v));
    for (auto& c : m) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return m;
}

// A unique, stable operationId: the method and the path's words.
std::string operation_id(const std::string& method, std::string_view path) {
    std::string id = method;
    bool sep = true;
    for (char c : path) {
        if (std::isalnum(static_cast<unsigned char>(c))) {
            if (sep) id += '_';
            id += c;
            sep = false;
        } else {
            sep = true;
        }
    }
    return id;
}

struct operation {
    std::string method;
    const route_spec* route;
    std::vector<std::string> params;
};

void write_error_schema(render::json_writer& out) {
    out.key("content")
        .begin_object()
        .key("application/json")
        .begin_object()
        .key("schema")
        .begin_object()
        .field("type", "object")
        .key("required")
        .begin_array()
        .value("error")
        .end_array()
        .key("properties")
        .begin_object()
        .key("error")
        .begin_object()
        .field("type", "string")
        .end_object()
        .end_object()
        .end_object()
        .end_object()
        .end_object();
}

}  // namespace

std::string openapi_document(std::span<const route_spec> routes, std::string_view version) {
    // Paths in table order of first appearance, each with its operations.
    std::vector<std::string> order;
    std::map<std::string, std::vector<operation>> paths;
    for (const auto& r : routes) {
        operation op{method_key(r.method), &r, {}};
        const std::string path = openapi_path(r.path, op.params);
        if (!paths.count(path)) order.push_back(path);
        paths[path].push_back(std::move(op));
    }
    render::json_writer out;
    out.begin_object()
        .field("openapi", "3.1.0")
        .key("info")
        .begin_object()
        .field("title", "queen broker")
        .field("version", version)
        .field("description",
               "Generated from the broker's route table. x-queen-access is the access level a token needs "
               "when authentication is on (public, read-only, read-write, admin). x-queen-tenancy is what the "
               "route sees when tenancy is on (outside, tenant, operator; docs/tenancy.md).")
        .end_object()
        .key("paths")
        .begin_object();
    for (const auto& path : order) {
        out.dynamic_key(path).begin_object();
        for (const auto& op : paths[path]) {
            out.dynamic_key(op.method)
                .begin_object()
                .field("operationId", operation_id(op.method, op.route->path))
                .field("summary", op.route->summary)
                .field("x-queen-access", access_name(op.route->access))
                .field("x-queen-tenancy", tenancy_name(op.route->tenancy));
            if (!op.params.empty()) {
                out.key("parameters").begin_array();
                for (const auto& p : op.params)
                    out.begin_object()
                        .field("name", p)
                        .field("in", "path")
                        .field("required", true)
                        .key("schema")
                        .begin_object()
                        .field("type", "string")
                        .end_object()
                        .end_object();
                out.end_array();
            }
            out.key("responses").begin_object();
            out.key("200").begin_object().field("description", "the answer (JSON)").end_object();
            out.key("default").begin_object().field("description", "a refusal: 4xx naming what is wrong, or 5xx");
            write_error_schema(out);
            out.end_object().end_object().end_object();
        }
        out.end_object();
    }
    out.end_object().end_object();
    return out.take();
}

}  // namespace queen::api
