#pragma once
// Helpers of the fusion tests: a counter of the cluster's commits, and HTTP requests that can
// be made to arrive at the broker within microseconds of each other.
#include "http_client.hpp"
#include "test_cluster.hpp"

#include <libpq-fe.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <latch>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace queen::test {

using namespace std::chrono_literals;

// Counts the write transactions (each one commit) of the cluster: the next transaction id
// to be assigned, read through a connection to ANOTHER database ("postgres") with a read-only
// query, which assigns none. pg_stat_database.xact_commit would count the same commits but
// reaches shared memory up to 10 s late in PostgreSQL 15 (backends flush statistics lazily).
class commit_counter {
public:
    explicit commit_counter(const test_cluster& db)
        : db_(db), conn_(PQconnectdb(db.conninfo_for("postgres").c_str()), &PQfinish) {
        if (PQstatus(conn_.get()) != CONNECTION_OK)
            throw std::runtime_error(std::string("stats connection: ") + PQerrorMessage(conn_.get()));
    }

    long long read() { return std::stoll(exec("SELECT pg_snapshot_xmax(pg_current_snapshot())::text")); }

    // The count once the broker's post-commit notification statements have run too.
    long long stable() {
        long long last = read();
        for (;;) {
            std::this_thread::sleep_for(300ms);
            long long now = read();
            if (now == last) return now;
            last = now;
        }
    }

private:
    std::string exec(const std::string& sql) {
        std::unique_ptr<PGresult, decltype(&PQclear)> r(PQexec(conn_.get(), sql.c_str()), &PQclear);
        if (PQresultStatus(r.get()) != PGRES_TUPLES_OK)
            throw std::runtime_error(sql + ": " + PQerrorMessage(conn_.get()));
        return PQntuples(r.get()) > 0 ? PQgetvalue(r.get(), 0, 0) : "";
    }
    const test_cluster& db_;
    std::unique_ptr<PGconn, decltype(&PQfinish)> conn_;
};

// One HTTP/1.1 request on its own TCP connection, sent in two parts: everything but the
// last byte first (connect, headers, body), then the last byte, so that many such requests
// can be made to arrive at the broker within microseconds of each other.
class split_request {
public:
    split_request(unsigned short port, const std::string& target, const std::string& body,
                  const std::string& method = "POST") {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        if (fd_ < 0) throw std::runtime_error("socket failed");
        int one = 1;
        ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(port);
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
            throw std::runtime_error("connect failed");
        request_ = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                   "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
        send_all(request_.data(), request_.size() - 1);
    }
    ~split_request() {
        if (fd_ >= 0) ::close(fd_);
    }
    split_request(const split_request&) = delete;
    split_request& operator=(const split_request&) = delete;

    void finish() { send_all(request_.data() + request_.size() - 1, 1); }

    // Reads the whole answer (the broker closes the connection after it: Connection: close).
    http_reply read_reply() {
        std::string raw;
        char buf[8192];
        for (;;) {
            ssize_t n = ::read(fd_, buf, sizeof buf);
            if (n <= 0) break;
            raw.append(buf, static_cast<std::size_t>(n));
        }
        http_reply out;
        auto head_end = raw.find("\r\n\r\n");
        if (raw.rfind("HTTP/1.1 ", 0) != 0 || head_end == std::string::npos)
            throw std::runtime_error("malformed answer: " + raw.substr(0, 200));
        out.status = std::stoi(raw.substr(9, 3));
        std::size_t pos = raw.find("\r\n") + 2;
        while (pos < head_end) {
            auto eol = raw.find("\r\n", pos);
            auto line = raw.substr(pos, eol - pos);
            auto colon = line.find(':');
            if (colon != std::string::npos) {
                std::string name = line.substr(0, colon);
                std::transform(name.begin(), name.end(), name.begin(),
                               [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
                auto value = line.substr(colon + 1);
                value.erase(0, value.find_first_not_of(' '));
                out.headers[name] = value;
            }
            pos = eol + 2;
        }
        out.body = raw.substr(head_end + 4);
        if (out.headers.count("content-length") &&
            out.body.size() != std::stoul(out.headers.at("content-length")))
            throw std::runtime_error("truncated answer: " + raw.substr(0, 200));
        return out;
    }

private:
    void send_all(const char* data, std::size_t size) {
        while (size > 0) {
            ssize_t n = ::write(fd_, data, size);
            if (n <= 0) throw std::runtime_error("write failed");
            data += n;
            size -= static_cast<std::size_t>(n);
        }
    }
    int fd_ = -1;
    std::string request_;
};

// One request of send_together.
struct together_request {
    std::string method;
    std::string target;
    std::string body;
};

// Sends the requests so that they reach the broker within microseconds of each other, each on
// its own connection (split_request); their replies, in order. A request that could not be
// sent or answered gets status 0 and the error as its body.
inline std::vector<http_reply> send_together(unsigned short port, const std::vector<together_request>& requests) {
    const std::size_t n = requests.size();
    std::vector<http_reply> replies(n);
    std::latch ready(static_cast<std::ptrdiff_t>(n + 1));
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < n; ++i)
        threads.emplace_back([&, i] {
            std::optional<split_request> req;
            try {
                req.emplace(port, requests[i].target, requests[i].body, requests[i].method);
            } catch (const std::exception& e) {
                replies[i].body = e.what();
            }
            ready.arrive_and_wait();
            if (!req) return;
            try {
                req->finish();
                replies[i] = req->read_reply();
            } catch (const std::exception& e) {
                replies[i].body = e.what();
            }
        });
    ready.arrive_and_wait();
    for (auto& t : threads) t.join();
    return replies;
}

}  // namespace queen::test
