#pragma once
// The broker's JWT authentication (docs/security.md): which paths skip it, and the verdict on
// a request's Authorization header. Owns the JWKS: read from JWT_JWKS_FILE at start and again
// on SIGHUP, or fetched from JWT_JWKS_URL at start, every JWT_JWKS_REFRESH_INTERVAL and on a
// token whose kid it does not know (at most once per unknown_kid_refetch_gap). A reload that
// fails keeps the keys it had.
#include "auth/auth_config.hpp"
#include "auth/token_verifier.hpp"

#include <utility>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>

namespace queen::auth {

// Refetches of JWT_JWKS_URL for unknown kids are at least this far apart, so that tokens with
// made-up kids cannot turn the broker into a load generator against the key server.
inline constexpr std::chrono::seconds unknown_kid_refetch_gap{10};

class authenticator {
public:
    // With auth off: enabled() is false and nothing is loaded. With auth on: loads the secret,
    // the PEM key and JWT_JWKS_FILE, or fetches JWT_JWKS_URL once (a failure is logged, and
    // tokens answer 503 until a fetch succeeds); throws std::invalid_argument (the broker refuses to
    // start) when they cannot verify a token of the configured algorithm.
    authenticator(boost::asio::any_io_executor executor, const auth::auth_config& cfg);

    // Arms the JWT_JWKS_URL refresh timer and the SIGHUP reload of JWT_JWKS_FILE.
    void start();
    void stop();

    bool enabled() const noexcept { return cfg_.enabled; }
    // True when `path` (the request target before '?') is in JWT_SKIP_PATHS: an exact entry,
    // or a prefix entry ending in '/' other than "/" itself.
    bool skips(std::string_view path) const;
    // The verdict on an Authorization header value (empty: no header).
    boost::asio::awaitable<verification> authenticate(std::string_view authorization);

    // Reads JWT_JWKS_FILE again; false (the old keys kept, the reason logged) on failure.
    bool reload_jwks_file();

private:
    std::shared_ptr<const key_set> current_jwks() const;
    void install(key_set keys, std::string_view source);
    // Fetches JWT_JWKS_URL once; false (logged) on failure.
    boost::asio::awaitable<bool> refresh_from_url();
    boost::asio::awaitable<void> refresh_loop();
    void wait_for_sighup();
    // Claims the right to refetch for an unknown kid now; false inside the gap.
    bool claim_unknown_kid_refetch();

    boost::asio::any_io_executor executor_;
    auth::auth_config cfg_;
    std::optional<token_verifier> verifier_;
    mutable std::mutex mutex_;
    std::shared_ptr<const key_set> jwks_;                                          // guarded by mutex_
    std::optional<std::chrono::steady_clock::time_point> last_unknown_kid_fetch_;  // guarded by mutex_
    std::optional<boost::asio::steady_timer> refresh_timer_;
    std::optional<boost::asio::signal_set> sighup_;
    std::atomic<bool> stopped_{false};
};

}  // namespace queen::auth
