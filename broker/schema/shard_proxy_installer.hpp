#pragma once
// Makes databases into a sharded deployment (docs/scaling.md): every shard gets the stock
// schema (and queen_ext where PostgreSQL has it) and becomes a shard of the logical-shard
// count; the proxy gets PL/Proxy, the cluster queen_shards and the queen.* functions
// generated from sql/shards. Idempotent: running it again with the same shards changes
// nothing. The one place besides the migrator that runs DDL.
#include "db/sync_connection.hpp"
#include "store/shard_move_store.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace queen::schema {

struct shard_layout {
    std::string proxy;                // connection string of the proxy database
    std::vector<std::string> shards;  // of each shard database, in order
    int logical_shards = 16;          // a power of 2, at least the number of shards
};

struct shard_install_report {
    int functions = 0;            // proxy functions generated
    std::vector<bool> extension;  // per shard: queen_ext installed there
};

// Installs the layout; throws std::runtime_error naming the database and step that failed, and
// std::invalid_argument, before changing anything, when a shard is the proxy or another proxy.
shard_install_report install_shards(const shard_layout& layout, std::chrono::milliseconds connect_wait);

// Applies the stock schema to a shard database and installs queen_ext where PostgreSQL has
// it; whether queen_ext is there after.
bool prepare_shard_schema(const std::string& conninfo, std::chrono::milliseconds connect_wait);

// Whether this database is a shard proxy (it serves queen.shard_databases()).
bool is_shard_proxy(const std::string& conninfo, std::chrono::milliseconds connect_wait);

// What a database already is, read before the shard tools change anything there (its schema
// may not exist yet): a proxy (it has the PL/Proxy cluster or its functions), a shard (its
// hosting), a database with queues.
struct database_kind {
    bool proxy = false;
    std::optional<store::shard_hosting> shard;
    bool holds_queues = false;
};
database_kind read_database_kind(db::sync_connection& database);

// A server session, to recognise one database reached through two connection strings.
struct session_mark {
    std::string pid, backend_start;
};
session_mark mark_session(db::sync_connection& c);
// Whether the session `mark` is connected to the database `c` is connected to.
bool sees_session(db::sync_connection& c, const session_mark& mark);

}  // namespace queen::schema
