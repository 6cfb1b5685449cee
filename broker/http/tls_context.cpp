#include "http/tls_context.hpp"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>

namespace queen::http {

namespace ssl = boost::asio::ssl;

namespace {

// Throws when `path` (the value of `setting`) cannot be opened for reading.
void require_readable(const char* setting, const std::string& path) {
    std::ifstream in(path);
    if (!in)
        throw std::invalid_argument(std::string(setting) + " '" + path + "' cannot be read: " + std::strerror(errno));
}

// Throws naming `setting` and `path` when `ec` is set; OpenSSL's error queue is cleared.
void require_ok(const boost::system::error_code& ec, const char* setting, const std::string& path, const char* what) {
    ERR_clear_error();
    if (!ec) return;
    throw std::invalid_argument(std::string(setting) + " '" + path + "' " + what + " (" + ec.message() + ")");
}

// Asks for and verifies client certificates against the roots in `ca_file`.
void require_client_certificates(ssl::context& ctx, const std::string& ca_file) {
    require_readable("QUEEN_TLS_CLIENT_CA", ca_file);
    boost::system::error_code ec;
    ctx.load_verify_file(ca_file, ec);
    require_ok(ec, "QUEEN_TLS_CLIENT_CA", ca_file, "holds no usable PEM certificate");
    if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(ca_file.c_str()))
        SSL_CTX_set_client_CA_list(ctx.native_handle(), names);
    ERR_clear_error();
    ctx.set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
}

// OpenSSL objects owned here, freed on every path.
struct bio_free {
    void operator()(BIO* b) const { BIO_free(b); }
};
struct bn_free {
    void operator()(BIGNUM* b) const { BN_free(b); }
};
struct openssl_free {
    void operator()(char* p) const { OPENSSL_free(p); }
};
using bio_ptr = std::unique_ptr<BIO, bio_free>;

// What was written to a memory BIO.
std::string bio_text(BIO* bio) {
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio, &data);
    return n > 0 && data ? std::string(data, static_cast<std::size_t>(n)) : std::string();
}

// An X509 name as one line ("CN=queen,O=example").
std::string name_text(const X509_NAME* name) {
    bio_ptr bio(BIO_new(BIO_s_mem()));
    if (!bio) return "?";
    X509_NAME_print_ex(bio.get(), name, 0, XN_FLAG_RFC2253);
    return bio_text(bio.get());
}

// An ASN1 time as OpenSSL prints it ("Dec  4 13:00:00 2026 GMT").
std::string time_text(const ASN1_TIME* t) {
    bio_ptr bio(BIO_new(BIO_s_mem()));
    if (!bio) return "?";
    ASN1_TIME_print(bio.get(), t);
    return bio_text(bio.get());
}

// The serial number in hexadecimal.
std::string serial_text(const ASN1_INTEGER* serial) {
    std::unique_ptr<BIGNUM, bn_free> bn(ASN1_INTEGER_to_BN(serial, nullptr));
    std::unique_ptr<char, openssl_free> hex(bn ? BN_bn2hex(bn.get()) : nullptr);
    return hex ? std::string(hex.get()) : std::string("?");
}

}  // namespace

std::shared_ptr<ssl::context> make_tls_context(const tls_files& files) {
    auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
    SSL_CTX* native = ctx->native_handle();
    SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
    ctx->set_options(ssl::context::default_workarounds | ssl::context::single_dh_use);
    static const unsigned char session_id[] = "queen";
    SSL_CTX_set_session_id_context(native, session_id, sizeof session_id - 1);

    boost::system::error_code ec;
    require_readable("QUEEN_TLS_CERT", files.cert);
    ctx->use_certificate_chain_file(files.cert, ec);
    require_ok(ec, "QUEEN_TLS_CERT", files.cert, "holds no usable PEM certificate chain");
    require_readable("QUEEN_TLS_KEY", files.key);
    ctx->use_private_key_file(files.key, ssl::context::pem, ec);
    require_ok(ec, "QUEEN_TLS_KEY", files.key, "is not a usable PEM private key of the certificate in QUEEN_TLS_CERT");
    if (SSL_CTX_check_private_key(native) != 1) {
        ERR_clear_error();
        throw std::invalid_argument("QUEEN_TLS_KEY '" + files.key +
                                    "' is not the key of the certificate in QUEEN_TLS_CERT '" + files.cert + "'");
    }
    if (!files.client_ca.empty()) require_client_certificates(*ctx, files.client_ca);
    return ctx;
}

std::string describe_certificate(ssl::context& ctx) {
    X509* cert = SSL_CTX_get0_certificate(ctx.native_handle());
    if (!cert) return "no certificate";
    return "subject=" + name_text(X509_get_subject_name(cert)) +
           ", serial=" + serial_text(X509_get0_serialNumber(cert)) +
           ", notAfter=" + time_text(X509_get0_notAfter(cert));
}

tls_context_holder::tls_context_holder(tls_files files)
    : files_(std::move(files)), current_(make_tls_context(files_)) {}

std::shared_ptr<ssl::context> tls_context_holder::current() const {
    std::lock_guard lock(mutex_);
    return current_;
}

std::string tls_context_holder::reload() {
    auto fresh = make_tls_context(files_);
    std::string description = describe_certificate(*fresh);
    std::lock_guard lock(mutex_);
    current_ = std::move(fresh);
    return description;
}

}  // namespace queen::http
