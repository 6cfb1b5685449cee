#pragma once
// The SQL of sql/ embedded at build time (cmake/embed_sql.cmake), sorted by file name.
#include <string_view>
#include <vector>

namespace queen::schema {

struct sql_file {
    std::string_view name;
    std::string_view text;
};

// Numbered DDL migrations (sql/migrations/NNNN_name.sql), applied once each.
const std::vector<sql_file>& embedded_migrations();
// Procedures and views (sql/procedures/*.sql), CREATE OR REPLACE, applied at every boot.
const std::vector<sql_file>& embedded_procedures();
// The proxy database of a sharded deployment (sql/shards/*.sql), applied by `queen shards init`.
const std::vector<sql_file>& embedded_shard_proxy();
// The operation catalogue (sql/operations.json): every database operation and its bodies;
// the shard proxy's generator reads its proxy routes.
std::string_view embedded_operation_catalogue();
// SHA-256 (hex) of the procedure files' names and texts: equal bundles, equal fingerprints.
std::string_view embedded_procedures_fingerprint();

}  // namespace queen::schema
