#pragma once
// A text-format result as a db::record_set: column names, value kinds from the column
// types, values as text.
#include "db/pg_result.hpp"
#include "db/record_set.hpp"

namespace queen::db {

db::record_set to_record_set(const pg_result& res);

}  // namespace queen::db
