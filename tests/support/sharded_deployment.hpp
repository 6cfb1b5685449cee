#pragma once
// A sharded deployment for tests (docs/scaling.md): two PostgreSQL clusters with two shard
// databases each and a proxy database on the first, made by `queen shards init` as a user runs
// it. Commits are synchronous (the test clusters' default is not), so a killed cluster keeps
// what it answered.
#include "test_cluster.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace queen::test {

struct sharded_deployment {
    test_cluster a;  // the proxy database ("proxy", or the name given) and shard0, shard1
    test_cluster b;  // shard2, shard3
    std::vector<std::string> shards;  // the shard databases' connection strings, in order

    explicit sharded_deployment(const std::string& proxy_database = "proxy");

    // `queen shards init` over these databases; throws with its output when it fails.
    void init() const;
    std::string init_arguments() const;  // init's arguments, shell-quoted
    // First column of the first row of `sql` on shard i ("" when no row or NULL).
    std::string on_shard(std::size_t i, const std::string& sql) const;
    // `sql`, answering one integer (or no row: 0), added up over the shards.
    long long sum_on_shards(const std::string& sql) const;
    // The first column of every row `sql` answers on shard i.
    std::vector<std::string> rows_on_shard(std::size_t i, const std::string& sql) const;
};

// `s` as one shell word.
std::string shell_quoted(const std::string& s);
// The broker binary's `shards` subcommand with `args`, its standard error with its output.
std::string shards_command(const std::string& args);

}  // namespace queen::test
