#include "sharded_deployment.hpp"

#include "shell_command.hpp"

#include <stdexcept>

namespace queen::test {

std::string shell_quoted(const std::string& s) {
    std::string out = "'";
    for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    return out + "'";
}

std::string shards_command(const std::string& args) {
    return std::string(QUEEN_BROKER_BINARY) + " shards " + args + " 2>&1";
}

sharded_deployment::sharded_deployment(const std::string& proxy_database)
    : a({{"synchronous_commit", "on"}}, proxy_database, codec_setup::stock),
      b({{"synchronous_commit", "on"}}, "queen_test", codec_setup::stock) {
    for (const char* name : {"shard0", "shard1"}) a.run_sql(std::string("CREATE DATABASE ") + name);
    for (const char* name : {"shard2", "shard3"}) b.run_sql(std::string("CREATE DATABASE ") + name);
    // The last as a URL, as operators often write them (init gives PL/Proxy key=value text).
    shards = {a.conninfo_for("shard0"), a.conninfo_for("shard1"), b.conninfo_for("shard2"),
              "postgresql://postgres@127.0.0.1:" + std::to_string(b.port()) + "/shard3?connect_timeout=5"};
}

void sharded_deployment::init() const {
    const auto r = run_shell(shards_command(init_arguments()));
    if (r.status != 0) throw std::runtime_error("queen shards init failed:\n" + r.out);
}

std::string sharded_deployment::init_arguments() const {
    std::string args = "init --proxy " + shell_quoted(a.conninfo());
    for (const auto& s : shards) args += " --shard " + shell_quoted(s);
    return args;
}

std::string sharded_deployment::on_shard(std::size_t i, const std::string& sql) const {
    if (i >= shards.size()) throw std::out_of_range("no shard " + std::to_string(i));
    return (i < 2 ? a : b).run_sql_in("shard" + std::to_string(i), sql);
}

std::vector<std::string> sharded_deployment::rows_on_shard(std::size_t i, const std::string& sql) const {
    if (i >= shards.size()) throw std::out_of_range("no shard " + std::to_string(i));
    return (i < 2 ? a : b).column_in("shard" + std::to_string(i), sql);
}

long long sharded_deployment::sum_on_shards(const std::string& sql) const {
    long long total = 0;
    for (std::size_t i = 0; i < shards.size(); ++i) {
        const auto v = on_shard(i, sql);
        if (!v.empty()) total += std::stoll(v);
    }
    return total;
}

}  // namespace queen::test
