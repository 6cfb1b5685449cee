#pragma once
// Message identity and time stamps as the API shows them.
#include <utility>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace queen::domain {

// The id of the message at (partition, offset): both numbers big-endian as a UUID string.
// Same rule as queen.message_id() in sql/procedures/20_identity.sql.
std::string message_id(std::int64_t partition_id, std::int64_t offset);

// Inverse of message_id; nullopt for anything that is not such an id.
std::optional<std::pair<std::int64_t, std::int64_t>> parse_message_id(std::string_view id);

// UTC ISO-8601 with microseconds: 2026-04-26T10:59:28.267966Z.
std::string iso_time(std::int64_t unix_micros);
// iso_time of a time that may be absent: nullopt stays nullopt (written as JSON null).
std::optional<std::string> iso_time(const std::optional<std::int64_t>& unix_micros);

// Microseconds since the Unix epoch from PostgreSQL's binary timestamptz (µs since 2000-01-01).
constexpr std::int64_t pg_epoch_offset_us = 946684800LL * 1000000LL;

// The earliest time this broker reads or writes: 0001-01-01T00:00:00Z (ISO-8601 and
// PostgreSQL have no year 0), in Unix microseconds. Windows computed back from a time stop here.
constexpr std::int64_t earliest_time_us = -62135596800LL * 1000000LL;

// Parses an ISO-8601 time stamp (date, 'T' or space, time, optional fraction, 'Z' or
// ±hh:mm offset) to Unix microseconds; nullopt when malformed or before earliest_time_us.
std::optional<std::int64_t> parse_iso_time(std::string_view text);

}  // namespace queen::domain
