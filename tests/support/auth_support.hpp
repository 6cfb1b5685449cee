#pragma once
// Helpers of the auth tests: requests with a bearer token, what the database holds for a
// queue, and a JWKS document served over HTTP by a python3 http.server subprocess.
#include "jwt_test_keys.hpp"
#include "test_env.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

namespace queen::test::auth_support {

inline const std::string secret = "integration-test-secret-0123456789abcdef";

inline http_reply send(http_client& c, const std::string& method, const std::string& target, const std::string& token,
                       const std::string& body = "") {
    std::map<std::string, std::string> headers;
    if (!token.empty()) headers["Authorization"] = "Bearer " + token;
    if (!body.empty()) headers["Content-Type"] = "application/json";
    return c.request(method, target, body, headers);
}

inline std::string push_body(const std::string& queue, const nlohmann::json& extra = nlohmann::json::object()) {
    nlohmann::json item{{"queue", queue}, {"payload", {{"n", 1}}}};
    item.update(extra);
    return nlohmann::json{{"items", {item}}}.dump();
}

// Messages stored for the queue (queen.messages).
inline int stored_messages(const std::string& queue) {
    return std::stoi(cluster().run_sql("SELECT count(*) FROM queen.messages WHERE queue = " + quote(queue)));
}

inline std::string error_of(const http_reply& r) {
    try {
        return r.json().value("error", std::string());
    } catch (...) {
        return r.body;
    }
}

inline void write_file(const std::filesystem::path& p, const std::string& text) {
    const auto tmp = p.string() + ".tmp";
    std::ofstream(tmp, std::ios::binary) << text;
    std::filesystem::rename(tmp, p);  // whole, so a reader never sees half a document
}

// python3's http.server on 127.0.0.1 serving a temporary directory, over HTTPS with the given
// certificate and key when they are set; stopped (by its pid) at destruction.
class jwks_server {
public:
    explicit jwks_server(std::string cert = "", std::string key = "")
        : port_(broker_process::free_port()), cert_(std::move(cert)), key_(std::move(key)) {
        start();
    }
    ~jwks_server() { stop(); }
    jwks_server(const jwks_server&) = delete;
    jwks_server& operator=(const jwks_server&) = delete;

    std::string url() const {
        return (cert_.empty() ? "http://" : "https://") + std::string("127.0.0.1:") + std::to_string(port_) +
               "/jwks.json";
    }
    void publish(const std::string& jwks) { write_file(dir_.path / "jwks.json", jwks); }
    void stop() {
        if (pid_ <= 0) return;
        ::kill(pid_, SIGTERM);
        ::waitpid(pid_, nullptr, 0);
        pid_ = -1;
    }

private:
    void start() {
        const std::string port = std::to_string(port_), dir = dir_.path.string();
        pid_ = ::fork();
        if (pid_ == 0) {
            int null = ::open("/dev/null", O_WRONLY);
            ::dup2(null, 1);
            ::dup2(null, 2);
            if (cert_.empty())
                ::execlp("python3", "python3", "-m", "http.server", port.c_str(), "--bind", "127.0.0.1",
                         "--directory", dir.c_str(), static_cast<char*>(nullptr));
            else
                ::execlp("python3", "python3", "-c", https_server_script, port.c_str(), dir.c_str(), cert_.c_str(),
                         key_.c_str(), static_cast<char*>(nullptr));
            ::_exit(127);
        }
        publish(R"({"keys":[]})");
        const bool up = eventually([&] {
            try {
                http_client c("127.0.0.1", port_);  // connects: the port is listening
                return !cert_.empty() || c.get("/jwks.json").status == 200;
            } catch (...) {
                return false;
            }
        });
        if (!up) throw std::runtime_error("python3 -m http.server did not start");
    }

    static constexpr const char* https_server_script =
        "import functools, http.server, ssl, sys\n"
        "port, directory, cert, key = sys.argv[1:5]\n"
        "handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=directory)\n"
        "server = http.server.ThreadingHTTPServer(('127.0.0.1', int(port)), handler)\n"
        "context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n"
        "context.load_cert_chain(cert, key)\n"
        "server.socket = context.wrap_socket(server.socket, server_side=True)\n"
        "server.serve_forever()\n";

    unsigned short port_;
    std::string cert_, key_;
    temp_dir dir_{"jwks"};  // what the server serves
    pid_t pid_ = -1;
};

}  // namespace queen::test::auth_support
