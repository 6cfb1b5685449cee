#include "auth/authenticator.hpp"

#include "auth/jwks_fetch.hpp"
#include "auth/jws_token.hpp"
#include "log/log.hpp"

#include <fmt/core.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <csignal>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace queen::auth {

namespace asio = boost::asio;

namespace {

// The JWKS document of a file; throws std::invalid_argument naming the file and the reason.
key_set read_jwks_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::invalid_argument(fmt::format("JWT_JWKS_FILE {} cannot be read", path));
    std::ostringstream text;
    text << in.rdbuf();
    try {
        return key_set::parse(text.str());
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(fmt::format("JWT_JWKS_FILE {}: {}", path, e.what()));
    }
}

// The first fetch of JWT_JWKS_URL, before the broker serves: on a private io_context, so
// that it is done (or has failed) when the first request arrives.
std::optional<key_set> fetch_at_start(const auth::auth_config& cfg) {
    asio::io_context ioc;
    std::optional<key_set> out;
    std::string failure;
    asio::co_spawn(ioc, fetch_jwks(ioc.get_executor(), cfg.jwks_url, cfg.jwks_timeout),
                   [&](std::exception_ptr e, std::string body) {
                       try {
                           if (e) std::rethrow_exception(e);
                           out = key_set::parse(body);
                       } catch (const std::exception& ex) {
                           failure = ex.what();
                       }
                   });
    ioc.run();
    if (!out)
        log::warn("JWT_JWKS_URL {}: fetch failed at start ({}); tokens answer 503 until a fetch succeeds", cfg.jwks_url,
                  failure);
    return out;
}

}  // namespace

authenticator::authenticator(asio::any_io_executor executor, const auth::auth_config& cfg)
    : executor_(asio::make_strand(executor)), cfg_(cfg) {
    if (!cfg_.enabled) return;
    verifier_.emplace(cfg_);
    if (verifier_->uses_jwks()) {
        std::optional<key_set> keys;
        if (!cfg_.jwks_file.empty())
            keys = read_jwks_file(cfg_.jwks_file);
        else
            keys = fetch_at_start(cfg_);
        const auto kind = verifier_->required_jwks_kind();
        if (keys && kind && !cfg_.jwks_file.empty()) {
            const auto alg = *algorithm_from_name(cfg_.algorithm);
            if (keys->candidates(alg, std::nullopt).empty())
                throw std::invalid_argument(fmt::format("JWT_ALGORITHM={} needs {}, and JWT_JWKS_FILE {} has none",
                                                        cfg_.algorithm, describe(*kind), cfg_.jwks_file));
        }
        if (keys) install(std::move(*keys), cfg_.jwks_file.empty() ? cfg_.jwks_url : cfg_.jwks_file);
    } else if (!cfg_.public_key_pem.empty() && (!cfg_.jwks_file.empty() || !cfg_.jwks_url.empty())) {
        log::warn("auth: JWT_PUBLIC_KEY is set, so JWT_JWKS_FILE / JWT_JWKS_URL are not used");
    }
    if (!cfg_.secret.empty() && cfg_.secret.size() < 32)
        log::warn("auth: JWT_SECRET is {} bytes; HS256 wants at least 32 (RFC 7518 section 3.2)", cfg_.secret.size());
}

void authenticator::start() {
    if (!cfg_.enabled || !verifier_->uses_jwks()) return;
    if (!cfg_.jwks_url.empty()) {
        refresh_timer_.emplace(executor_);
        asio::co_spawn(executor_, refresh_loop(), asio::detached);
    }
    if (!cfg_.jwks_file.empty()) {
        sighup_.emplace(executor_, SIGHUP);
        wait_for_sighup();
    }
}

void authenticator::stop() {
    stopped_ = true;
    asio::post(executor_, [this] {
        if (refresh_timer_) refresh_timer_->cancel();
        if (sighup_) sighup_->cancel();
    });
}

bool authenticator::skips(std::string_view path) const {
    for (const auto& entry : cfg_.skip_paths) {
        if (entry == path) return true;
        if (entry.size() > 1 && entry.back() == '/' && path.substr(0, entry.size()) == entry) return true;
    }
    return false;
}

std::shared_ptr<const key_set> authenticator::current_jwks() const {
    std::lock_guard lock(mutex_);
    return jwks_;
}

void authenticator::install(key_set keys, std::string_view source) {
    log::info("auth: JWKS from {}: {} key(s){}", source, keys.size(),
              keys.skipped() ? fmt::format(", {} unusable key(s) left out", keys.skipped()) : std::string());
    auto shared = std::make_shared<const key_set>(std::move(keys));
    std::lock_guard lock(mutex_);
    jwks_ = std::move(shared);
}

bool authenticator::reload_jwks_file() {
    try {
        install(read_jwks_file(cfg_.jwks_file), cfg_.jwks_file);
        return true;
    } catch (const std::exception& e) {
        log::warn("auth: SIGHUP: {}; the keys loaded before stay in use", e.what());
        return false;
    }
}

void authenticator::wait_for_sighup() {
    sighup_->async_wait([this](const boost::system::error_code& ec, int) {
        if (ec || stopped_) return;
        log::info("auth: SIGHUP: reloading JWT_JWKS_FILE {}", cfg_.jwks_file);
        reload_jwks_file();
        wait_for_sighup();
    });
}

asio::awaitable<bool> authenticator::refresh_from_url() {
    auto executor = co_await asio::this_coro::executor;
    try {
        std::string body = co_await fetch_jwks(executor, cfg_.jwks_url, cfg_.jwks_timeout);
        install(key_set::parse(body), cfg_.jwks_url);
        co_return true;
    } catch (const std::exception& e) {
        log::warn("auth: JWT_JWKS_URL {}: fetch failed ({}); the keys loaded before stay in use", cfg_.jwks_url,
                  e.what());
    }
    co_return false;
}

asio::awaitable<void> authenticator::refresh_loop() {
    while (!stopped_) {
        refresh_timer_->expires_after(cfg_.jwks_refresh_interval);
        boost::system::error_code ec;
        co_await refresh_timer_->async_wait(asio::redirect_error(asio::use_awaitable, ec));
        if (ec || stopped_) co_return;
        co_await refresh_from_url();
    }
}

bool authenticator::claim_unknown_kid_refetch() {
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(mutex_);
    if (last_unknown_kid_fetch_ && now - *last_unknown_kid_fetch_ < unknown_kid_refetch_gap) return false;
    last_unknown_kid_fetch_ = now;
    return true;
}

asio::awaitable<verification> authenticator::authenticate(std::string_view authorization) {
    const std::string token(token_of_header(authorization));
    if (token.empty()) co_return auth_failure{failure_kind::missing_token, {}};
    auto keys = current_jwks();
    verification verdict = verifier_->verify(token, keys.get(), std::chrono::system_clock::now());
    const auto* failure = std::get_if<auth_failure>(&verdict);
    if (!failure || cfg_.jwks_url.empty() || !verifier_->uses_jwks()) co_return verdict;
    if (failure->kind != failure_kind::unknown_kid && failure->kind != failure_kind::jwks_unavailable)
        co_return verdict;
    // A kid the keys do not know may be a rotation: fetch again, unless a fetch for that
    // reason happened within the gap.
    if (!claim_unknown_kid_refetch()) co_return verdict;
    const bool fetched = co_await refresh_from_url();
    if (!fetched) co_return auth_failure{failure_kind::jwks_unavailable, {}};
    keys = current_jwks();
    co_return verifier_->verify(token, keys.get(), std::chrono::system_clock::now());
}

}  // namespace queen::auth
