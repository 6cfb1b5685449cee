#include "db/pg_listener.hpp"

#include "db/pg_connection.hpp"

#include <utility>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>

namespace queen::db {

namespace asio = boost::asio;
using namespace std::chrono_literals;

// Everything but `stopped`, `started` and `listening` is touched only on the strand.
class pg_listener_state {
public:
    pg_listener_state(asio::any_io_executor executor, std::string conninfo, std::vector<std::string> channels,
                      pg_listener_handlers handlers)
        : strand(asio::make_strand(executor)),
          conninfo(std::move(conninfo)),
          channels(std::move(channels)),
          handlers(std::move(handlers)),
          backoff_timer(strand) {}

    static asio::awaitable<void> run(std::shared_ptr<pg_listener_state> self);
    void deliver();

    asio::any_io_executor strand;
    std::string conninfo;
    std::vector<std::string> channels;
    pg_listener_handlers handlers;
    asio::steady_timer backoff_timer;
    std::unique_ptr<pg_connection> conn;
    std::atomic<bool> started{false};
    std::atomic<bool> stopped{false};
    std::atomic<bool> listening{false};  // LISTEN done on every channel, connection not lost since
};

namespace {

constexpr auto kMinBackoff = 100ms;
constexpr auto kMaxBackoff = 2000ms;
constexpr auto kConnectTimeout = 10000ms;

std::string quote_ident(const std::string& name) {
    std::string out = "\"";
    for (char c : name) {
        if (c == '"') out += '"';
        out += c;
    }
    out += '"';
    return out;
}

}  // namespace

void pg_listener_state::deliver() {
    while (PGnotify* n = PQnotifies(conn->native())) {
        std::string channel = n->relname ? n->relname : "";
        std::string payload = n->extra ? n->extra : "";
        PQfreemem(n);
        if (stopped || !handlers.on_notify) continue;
        try {
            handlers.on_notify(channel, payload);
        } catch (...) {
            // A handler's failure must not tear down the listening connection.
        }
    }
}

asio::awaitable<void> pg_listener_state::run(std::shared_ptr<pg_listener_state> self) {
    std::chrono::milliseconds backoff = kMinBackoff;
    while (!self->stopped) {
        try {
            self->conn = std::make_unique<pg_connection>(self->strand);
            co_await self->conn->connect(self->conninfo, kConnectTimeout);
            for (const auto& channel : self->channels) {
                if (self->stopped) break;
                co_await self->conn->exec("LISTEN " + quote_ident(channel), std::vector<pg_param>(),
                                          result_format::text);
            }
            if (self->stopped) break;
            backoff = kMinBackoff;
            self->listening = true;
            if (self->handlers.on_connected) {
                try {
                    self->handlers.on_connected();
                } catch (...) {
                }
            }
            for (;;) {
                self->deliver();
                co_await self->conn->wait_readable();
            }
        } catch (const std::exception&) {
            // Connection failed or was lost (or stop() cancelled it): retry after a back-off.
        }
        self->listening = false;
        self->conn.reset();
        if (self->stopped) break;
        boost::system::error_code ec;
        self->backoff_timer.expires_after(backoff);
        co_await self->backoff_timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        backoff = std::min<std::chrono::milliseconds>(backoff * 2, kMaxBackoff);
    }
    self->conn.reset();
}

pg_listener::pg_listener(asio::any_io_executor executor, std::string conninfo, std::vector<std::string> channels,
                         pg_listener_handlers handlers)
    : state_(std::make_shared<pg_listener_state>(std::move(executor), std::move(conninfo), std::move(channels),
                                                 std::move(handlers))) {}

pg_listener::~pg_listener() {
    stop();
}

bool pg_listener::connected() const noexcept {
    return state_->listening.load();
}

void pg_listener::start() {
    if (state_->stopped || state_->started.exchange(true)) return;
    asio::co_spawn(state_->strand, pg_listener_state::run(state_), asio::detached);
}

void pg_listener::stop() {
    if (state_->stopped.exchange(true)) return;
    if (!state_->started) return;
    // Wake the coroutine wherever it waits; it then closes the connection and ends.
    asio::post(state_->strand, [s = state_] {
        if (s->conn) s->conn->cancel();
        s->backoff_timer.cancel();
    });
}

}  // namespace queen::db
