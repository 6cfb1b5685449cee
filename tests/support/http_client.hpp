#pragma once
// A small synchronous HTTP/1.1 client for tests (Beast), keep-alive on one connection.
#include <nlohmann/json.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace queen::test {

struct http_reply {
    int status = 0;
    std::map<std::string, std::string> headers;  // lower-case names
    std::string body;
    bool has_header(const std::string& name) const { return headers.count(name) > 0; }
    nlohmann::json json() const { return nlohmann::json::parse(body); }
};

class http_client {
public:
    http_client(std::string host, unsigned short port);
    ~http_client();
    http_client(http_client&&) noexcept;

    http_reply get(const std::string& target);
    http_reply post(const std::string& target, const std::string& body);
    http_reply post(const std::string& target, const nlohmann::json& body) { return post(target, body.dump()); }
    http_reply del(const std::string& target);
    http_reply request(const std::string& method, const std::string& target, const std::string& body,
                       const std::map<std::string, std::string>& headers = {});
    // Sends raw bytes and returns whatever the server answers before closing.
    std::string raw(const std::string& bytes);
    void close();

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

// Percent-encodes a path segment or query value.
std::string url_encode(const std::string& s);

}  // namespace queen::test
