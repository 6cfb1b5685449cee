// db::hardened_conninfo: what each kind of connection adds to the operator's conninfo, and
// that nothing the operator (or libpq's environment) set is overridden; db::keyword_conninfo. No database needed.
#include "db/conninfo.hpp"

#include <libpq-fe.h>

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>

namespace {

using queen::db::connection_role;
using queen::db::connection_settings;
using queen::db::hardened_conninfo;

// The conninfo's parameters as libpq reads them back.
std::map<std::string, std::string> params(const std::string& conninfo) {
    char* err = nullptr;
    std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)> opts(PQconninfoParse(conninfo.c_str(), &err),
                                                                      &PQconninfoFree);
    if (!opts) {
        std::string why = err ? err : "?";
        PQfreemem(err);
        throw std::runtime_error("does not parse: " + why);
    }
    std::map<std::string, std::string> out;
    for (auto* o = opts.get(); o->keyword; ++o)
        if (o->val) out[o->keyword] = o->val;
    return out;
}

const char* no_env(const char*) { return nullptr; }

std::map<std::string, std::string> harden(const std::string& conninfo, connection_role role,
                                          const connection_settings& s = connection_settings{}) {
    return params(hardened_conninfo(conninfo, s, role, &no_env));
}

TEST(Conninfo, EveryConnectionGetsKeepalivesUserTimeoutAndReadWrite) {
    for (auto role : {connection_role::requests, connection_role::listener, connection_role::maintenance}) {
        auto p = harden("host=db port=5433 dbname=q user=u", role);
        EXPECT_EQ(p["host"], "db");
        EXPECT_EQ(p["port"], "5433");
        EXPECT_EQ(p["dbname"], "q");
        EXPECT_EQ(p["keepalives"], "1");
        EXPECT_EQ(p["keepalives_idle"], "5");
        EXPECT_EQ(p["keepalives_interval"], "2");
        EXPECT_EQ(p["keepalives_count"], "3");
        EXPECT_EQ(p["tcp_user_timeout"], "5000");
        EXPECT_EQ(p["target_session_attrs"], "read-write");
        EXPECT_EQ(p.count("sslmode"), 0u) << "no sslmode unless one is configured";
    }
}

TEST(Conninfo, OnlyRequestConnectionsGetTheStatementTimeout) {
    EXPECT_EQ(harden("host=db", connection_role::requests)["options"], "-c statement_timeout=30000");
    EXPECT_EQ(harden("host=db", connection_role::listener).count("options"), 0u);
    EXPECT_EQ(harden("host=db", connection_role::maintenance).count("options"), 0u);
    connection_settings none;
    none.statement_timeout = std::chrono::milliseconds(0);
    EXPECT_EQ(harden("host=db", connection_role::requests, none).count("options"), 0u);
}

TEST(Conninfo, RequestConnectionsCarryTheTenantQueueLimitWhenSet) {
    connection_settings limited;
    limited.tenant_max_queues = 25;
    EXPECT_EQ(harden("host=db", connection_role::requests, limited)["options"],
              "-c statement_timeout=30000 -c queen.tenant_max_queues=25");
    EXPECT_EQ(harden("host=db options='-c work_mem=8MB'", connection_role::requests, limited)["options"],
              "-c work_mem=8MB -c statement_timeout=30000 -c queen.tenant_max_queues=25");
    EXPECT_EQ(harden("host=db", connection_role::maintenance, limited).count("options"), 0u);
    limited.statement_timeout = std::chrono::milliseconds(0);
    EXPECT_EQ(harden("host=db", connection_role::requests, limited)["options"], "-c queen.tenant_max_queues=25");
}

TEST(Conninfo, TheOperatorsOwnParametersWin) {
    auto p = harden("postgresql://u:pw@db:6000/q?keepalives_idle=60&tcp_user_timeout=0&target_session_attrs=any"
                    "&sslmode=verify-full&sslrootcert=/etc/ca.pem&options=-c%20statement_timeout%3D5",
                    connection_role::requests, [] {
                        connection_settings s;
                        s.sslmode = "require";
                        return s;
                    }());
    EXPECT_EQ(p["keepalives_idle"], "60");
    EXPECT_EQ(p["keepalives_interval"], "2") << "what the operator left unset is still added";
    EXPECT_EQ(p["tcp_user_timeout"], "0");
    EXPECT_EQ(p["target_session_attrs"], "any");
    EXPECT_EQ(p["sslmode"], "verify-full");
    EXPECT_EQ(p["sslrootcert"], "/etc/ca.pem");
    EXPECT_EQ(p["options"], "-c statement_timeout=5");
    EXPECT_EQ(p["password"], "pw");
    EXPECT_EQ(p["user"], "u");
}

TEST(Conninfo, OtherOptionsOfTheOperatorAreKeptAndExtended) {
    auto p = harden("host=db options='-c search_path=x'", connection_role::requests);
    EXPECT_EQ(p["options"], "-c search_path=x -c statement_timeout=30000");
}

TEST(Conninfo, LibpqEnvironmentVariablesCountAsSet) {
    auto env = [](const char* name) -> const char* {
        std::string n(name);
        if (n == "PGSSLMODE") return "verify-ca";
        if (n == "PGTARGETSESSIONATTRS") return "primary";
        if (n == "PGOPTIONS") return "-c work_mem=64MB";
        return nullptr;
    };
    connection_settings s;
    s.sslmode = "require";
    auto p = params(hardened_conninfo("host=db", s, connection_role::requests, env));
    EXPECT_EQ(p.count("sslmode"), 0u) << "libpq takes PGSSLMODE itself";
    EXPECT_EQ(p.count("target_session_attrs"), 0u);
    EXPECT_EQ(p["options"], "-c work_mem=64MB -c statement_timeout=30000") << "PGOPTIONS is kept, not overridden";
}

TEST(Conninfo, SslmodeIsAddedWhenConfiguredAndMultiHostSurvives) {
    connection_settings s;
    s.sslmode = "require";
    auto p = harden("postgresql://u@a:5432,b:5433/q", connection_role::requests, s);
    EXPECT_EQ(p["sslmode"], "require");
    EXPECT_EQ(p["host"], "a,b");
    EXPECT_EQ(p["port"], "5432,5433");
    EXPECT_EQ(p["target_session_attrs"], "read-write");
}

TEST(Conninfo, ValuesWithQuotesAndBackslashesRoundTrip) {
    auto p = harden(R"(host=db password='it\'s a \\ secret')", connection_role::listener);
    EXPECT_EQ(p["password"], R"(it's a \ secret)");
}

TEST(Conninfo, AnUnparsableConninfoIsRefusedWithoutRepeatingIt) {
    try {
        hardened_conninfo("host=db bogus_keyword=1 password=hunter2", connection_settings{},
                          connection_role::requests, &no_env);
        FAIL() << "no exception";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("bogus_keyword"), std::string::npos) << e.what();
        EXPECT_EQ(std::string(e.what()).find("hunter2"), std::string::npos) << e.what();
    }
}

TEST(Conninfo, SslmodeNames) {
    for (const char* m : {"disable", "allow", "prefer", "require", "verify-ca", "verify-full"})
        EXPECT_TRUE(queen::db::valid_sslmode(m)) << m;
    EXPECT_FALSE(queen::db::valid_sslmode("true"));
    EXPECT_FALSE(queen::db::valid_sslmode("REQUIRE"));
}

// A shard's URL becomes key=value text PL/Proxy can append to, with exactly its parameters.
TEST(Conninfo, KeywordConninfoTurnsAUrlIntoKeyValueTextWithTheSameParameters) {
    const std::string url = "postgresql://app:p%27w@db.example:6543/shard1?connect_timeout=5";
    const std::string text = queen::db::keyword_conninfo(url);
    EXPECT_EQ(text.find("postgresql://"), std::string::npos) << text;
    EXPECT_EQ(params(text), params(url));
    EXPECT_EQ(params(text).at("password"), "p'w");
    EXPECT_EQ(params(queen::db::keyword_conninfo("host=h dbname=d")),
              (std::map<std::string, std::string>{{"host", "h"}, {"dbname", "d"}}));
    EXPECT_THROW(queen::db::keyword_conninfo("host=h nonsense"), std::invalid_argument);
}

}  // namespace
