#pragma once
// Writes db::record_set rows as JSON, column names as member names: "a.b.c" nests c in
// object b in object a, and columns of one object come together. The status and analytics answers are written from
// these (sql/procedures/94_status.sql names its columns so); values keep their SQL text.
#include "db/record_set.hpp"
#include "render/json_writer.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace queen::render {

// Writes the columns of row `row` whose names start with `prefix` (the prefix cut off) as
// members of the object open in `out`, nesting dotted names; integers and numbers as JSON
// numbers (a non-finite number as null), booleans as true/false, NULL as null, text as strings.
void write_members(json_writer& out, const db::record_set& records, std::size_t row, std::string_view prefix = {});
// The same members as one object of their own.
void write_record(json_writer& out, const db::record_set& records, std::size_t row, std::string_view prefix = {});
// One column as one member.
void write_member(json_writer& out, const db::record_set& records, std::size_t row, std::string_view column);
// Writes every row, in order, as an array of such objects.
void write_records(json_writer& out, const db::record_set& records);

}  // namespace queen::render
