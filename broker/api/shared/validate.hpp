#pragma once
// The checks every request parser shares, in the style of pgvector's Check* functions: each
// returns normally or throws bad_request naming the field (`what`) and the rule it breaks.
// Limits come from config::limits, built once in main (config/limits.hpp).
#include "config/limits.hpp"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace queen::api {

// A queue, partition or consumer-group name, or a transaction id: 1..max_name_bytes bytes
// without NUL.
void check_name(const std::string& what, std::string_view value, const config::limits& lim);

// A string field stored as PostgreSQL text: no NUL character (from the escape \u0000).
void check_no_nul(const std::string& what, std::string_view value);

// A payload (a push item's payload, a trace's data) nests at most lim.max_payload_depth levels.
void check_payload_depth(const nlohmann::json& payload, const std::string& what, const config::limits& lim);

// The same rule for a payload kept as the JSON text the client sent.
void check_payload_text_depth(std::string_view payload, const std::string& what, const config::limits& lim);

// A JSON number that is an integer in [min, max] (an unsigned value past int64 or a double of
// any size included); throws bad_request "<what> must be an integer" or "<what> must be between
// <min> and <max>, got <value>".
std::int64_t json_integer(const nlohmann::json& value, const std::string& what, std::int64_t min, std::int64_t max);

// A partitionId as clients send it back (an ack, a trace, a message route): a positive decimal
// row id; nullopt for anything else.
std::optional<std::int64_t> parse_partition_id(std::string_view text);

// A query-string integer in [min, max]; fallback when absent or empty.
std::int64_t query_int(const std::map<std::string, std::string>& query, const char* key, std::int64_t fallback,
                       std::int64_t min, std::int64_t max);

// A query-string name filter (check_name); nullopt when absent or empty.
std::optional<std::string> query_name(const std::map<std::string, std::string>& query, const char* key,
                                      const config::limits& lim);

// A query-string ISO-8601 time as Unix µs; nullopt when absent or empty.
std::optional<std::int64_t> query_time(const std::map<std::string, std::string>& query, const char* key);

}  // namespace queen::api
