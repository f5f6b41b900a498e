#pragma once
// Renderers of the one result model (summary.hpp). None of them computes a figure.
#include <string>

#include <nlohmann/json.hpp>

#include "report/summary.hpp"

namespace mtperf {

inline constexpr int kJsonSchema = 1;

// The versioned JSON document (docs/json-schema.md). Non-finite numbers are written as null.
nlohmann::json report_json(const Report& r);
// The human table.
std::string report_text(const Report& r);
// One header line (when `header`) and one row, netperf omni selector names as columns.
std::string report_csv(const Report& r, bool header);
// A header line and one line per flow (the summary's flows), for thousands of flows.
std::string report_flows_csv(const Report& r);

nlohmann::json environment_json(const std::string& version);

}  // namespace mtperf
