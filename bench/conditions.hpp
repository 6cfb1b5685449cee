#pragma once
// The conditions of a run, stated the same way in the table's condition line and in the JSON
// result, so that every result says every condition that shapes its figures.
#include "options.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace queen::bench {

// "mode=… messages=… partitions=… …": every condition, one line.
std::string condition_line(const options& o);

// The same conditions as a JSON object (key per condition).
nlohmann::json conditions_json(const options& o);

}  // namespace queen::bench
