#pragma once
// The HTTPS listener's TLS settings: an asio::ssl::context built from PEM files (TLS 1.2 at
// least; client certificates required when a client CA is given), and a holder that hands each
// new connection the current context and swaps in a new one on reload. A connection keeps the
// context it started with (its shared_ptr) until it closes, so a reload drops nobody.
#include <utility>

#include <boost/asio/ssl/context.hpp>

#include <memory>
#include <mutex>
#include <string>

namespace queen::http {

struct tls_files {
    std::string cert;       // QUEEN_TLS_CERT: the certificate chain, leaf first (PEM)
    std::string key;        // QUEEN_TLS_KEY: the leaf's private key (PEM, not encrypted)
    std::string client_ca;  // QUEEN_TLS_CLIENT_CA: roots client certificates must chain to; empty: none asked
};

// A server context from `files`; throws std::invalid_argument naming the setting and file that
// could not be used (missing, unreadable, not PEM, or a key that is not the certificate's).
std::shared_ptr<boost::asio::ssl::context> make_tls_context(const tls_files& files);

// "subject=..., serial=..., notAfter=..." of the context's own certificate.
std::string describe_certificate(boost::asio::ssl::context& ctx);

class tls_context_holder {
public:
    // Builds the first context; throws like make_tls_context.
    explicit tls_context_holder(tls_files files);

    // The context for a new connection.
    std::shared_ptr<boost::asio::ssl::context> current() const;

    // Rebuilds the context from the same files and installs it; returns its certificate's
    // description. On failure throws like make_tls_context and keeps the current context.
    std::string reload();

    const tls_files& files() const noexcept { return files_; }

private:
    const tls_files files_;
    mutable std::mutex mutex_;
    std::shared_ptr<boost::asio::ssl::context> current_;
};

}  // namespace queen::http
