#include "report/suite.hpp"

#include "report/render.hpp"

namespace mtperf {

std::string_view to_string(SuiteStatus s) {
  switch (s) {
    case SuiteStatus::ok:
      return "ok";
    case SuiteStatus::failed:
      return "failed";
    case SuiteStatus::skipped:
      return "skipped";
    case SuiteStatus::interrupted:
      return "interrupted";
  }
  return "?";
}

nlohmann::json suite_json(const Suite& s) {
  nlohmann::json unusable = nlohmann::json::array();
  for (const auto& u : s.unusable)
    unusable.push_back({{"transport", u.transport}, {"why", u.why}});
  nlohmann::json cases = nlohmann::json::array();
  for (const auto& c : s.cases) {
    nlohmann::json results = nlohmann::json::array();
    for (const auto& r : c.results)
      results.push_back(
          {{"transport", r.transport},
           {"status", to_string(r.status)},
           {"report", r.report ? report_json(*r.report) : nlohmann::json()},
           {"message", r.message.empty() ? nlohmann::json() : nlohmann::json(r.message)}});
    cases.push_back({{"label", c.label}, {"args", c.args}, {"results", results}});
  }
  return {{"schema", kSuiteJsonSchema},
          {"suite",
           {{"length_s", s.length_s},
            {"transports", s.transports},
            {"unusable", unusable},
            {"cases", cases}}}};
}

}  // namespace mtperf
