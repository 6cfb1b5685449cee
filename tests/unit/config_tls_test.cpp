// The HTTPS settings: plain HTTP by default, a certificate and its key only together, a client
// CA only with both; the start-up line names the files.
#include "config/config.hpp"
#include "config_support.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace {

using queen::config::describe;
using queen::config::from_map;

using queen::test::error_of;
using queen::test::mentions;

TEST(TlsConfig, PlainHttpIsTheDefault) {
    auto c = from_map({{"HOME", "/h"}});
    EXPECT_TRUE(c.tls_cert_file.empty());
    EXPECT_TRUE(c.tls_key_file.empty());
    EXPECT_TRUE(c.tls_client_ca_file.empty());
    EXPECT_TRUE(mentions(describe(c), "tls_cert=none (plain HTTP)"));
}

TEST(TlsConfig, CertificateKeyAndClientCaAreRead) {
    auto c = from_map({{"HOME", "/h"},
                       {"QUEEN_TLS_CERT", "/etc/queen/server.crt"},
                       {"QUEEN_TLS_KEY", "/etc/queen/server.key"},
                       {"QUEEN_TLS_CLIENT_CA", "/etc/queen/clients.crt"}});
    EXPECT_EQ(c.tls_cert_file, "/etc/queen/server.crt");
    EXPECT_EQ(c.tls_key_file, "/etc/queen/server.key");
    EXPECT_EQ(c.tls_client_ca_file, "/etc/queen/clients.crt");
    EXPECT_TRUE(mentions(describe(c), "tls_cert=/etc/queen/server.crt (QUEEN_TLS_CERT)"));
    EXPECT_TRUE(mentions(describe(c), "tls_client_ca=/etc/queen/clients.crt (QUEEN_TLS_CLIENT_CA)"));
}

TEST(TlsConfig, OneWithoutTheOtherIsRefused) {
    auto cert_only = error_of({{"HOME", "/h"}, {"QUEEN_TLS_CERT", "/c"}});
    EXPECT_TRUE(mentions(cert_only, "QUEEN_TLS_KEY is not")) << cert_only;
    auto key_only = error_of({{"HOME", "/h"}, {"QUEEN_TLS_KEY", "/k"}});
    EXPECT_TRUE(mentions(key_only, "QUEEN_TLS_CERT is not")) << key_only;
    auto ca_only = error_of({{"HOME", "/h"}, {"QUEEN_TLS_CLIENT_CA", "/ca"}});
    EXPECT_TRUE(mentions(ca_only, "QUEEN_TLS_CLIENT_CA needs")) << ca_only;
}

}  // namespace
