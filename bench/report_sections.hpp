#pragma once
// The report's sections for the fan-out, fixed-rate and pipeline modes, and the verdict JSON.
#include "ledger.hpp"
#include "options.hpp"
#include "stats.hpp"

#include <nlohmann/json.hpp>

#include <vector>

namespace queen::bench {

// {"expected":…, "duplicates":…, …}: every count of a verdict.
nlohmann::json verdict_json(const verdict& v);

// --rate: target and achieved rate, send lateness behind the schedule, slips.
nlohmann::json rate_section(const options& o, producer_stats& p);

// --groups: one verdict per group, named.
nlohmann::json groups_section(const options& o, const std::vector<verdict>& verdicts);

// Pipeline: per forwarding stage its counters, rate and latencies, plus totals.
nlohmann::json pipeline_section(const options& o, std::vector<stage_stats>& stages);

}  // namespace queen::bench
