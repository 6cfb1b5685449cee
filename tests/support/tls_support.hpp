#pragma once
// Helpers of the TLS tests: a throwaway PKI made with the openssl command (a CA, and server and
// client certificates it signs), and curl/openssl runs whose output and exit status are read.
#include "shell_command.hpp"
#include "test_env.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace queen::test::tls {

namespace fs = std::filesystem;

// A temporary directory of certificates, removed at the end. Each name <n> is <n>.crt + <n>.key.
class pki {
public:
    pki() : dir_("tls") {}

    fs::path crt(const std::string& name) const { return dir_.path / (name + ".crt"); }
    fs::path key(const std::string& name) const { return dir_.path / (name + ".key"); }
    fs::path file(const std::string& name) const { return dir_.path / name; }

    // A self-signed root named `name` (CN=name).
    void make_ca(const std::string& name) {
        must("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=" + name +
             " -keyout " + key(name).string() + " -out " + crt(name).string());
    }

    // A certificate CN=cn with `serial`, signed by `ca`, for 127.0.0.1 and localhost;
    // `usage` is serverAuth or clientAuth.
    void make_leaf(const std::string& name, const std::string& cn, const std::string& serial, const std::string& usage,
                   const std::string& ca) {
        const auto csr = file(name + ".csr"), ext = file(name + ".ext");
        std::ofstream(ext) << "basicConstraints=CA:FALSE\nextendedKeyUsage=" << usage
                           << "\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n";
        must("openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=" + cn + " -keyout " +
             key(name).string() + " -out " + csr.string());
        must("openssl x509 -req -in " + csr.string() + " -CA " + crt(ca).string() + " -CAkey " + key(ca).string() +
             " -set_serial " + serial + " -days 2 -extfile " + ext.string() + " -out " + crt(name).string());
    }

private:
    static void must(const std::string& command) {
        auto r = run_shell(command + " >/dev/null 2>&1");
        if (r.status != 0) throw std::runtime_error("failed: " + command);
    }

    temp_dir dir_;
};

struct curl_reply {
    int exit = -1;   // curl's exit status (0: an HTTP answer came)
    int status = 0;  // the HTTP status
    std::string body;
};

// curl with `args` (e.g. "--cacert ca.crt https://..."); the answer's status and body.
inline curl_reply curl(const std::string& args) {
    auto r = run_shell("curl -sS --max-time 40 -w '\\n%{http_code}' " + args + " 2>/dev/null");
    curl_reply reply;
    reply.exit = r.status;
    const auto nl = r.out.rfind('\n');
    if (nl == std::string::npos) return reply;
    reply.body = r.out.substr(0, nl);
    reply.status = std::atoi(r.out.c_str() + nl + 1);
    return reply;
}

// The subject of the certificate a new TLS connection to 127.0.0.1:port is shown ("" when
// the handshake failed).
inline std::string served_subject(unsigned short port) {
    auto r = run_shell("openssl s_client -connect 127.0.0.1:" + std::to_string(port) +
                 " </dev/null 2>/dev/null | openssl x509 -noout -subject 2>/dev/null");
    return r.out;
}

}  // namespace queen::test::tls
