#pragma once
// `mtperf report`: mtperf's JSON documents (docs/json-schema.md) as one self-contained HTML
// page — inline SVG charts and inline CSS, nothing fetched, no script — with a table under
// every chart, light colours, and a print style.
//
//   run      latency percentiles on a log axis, the CPU split per host, per-flow bars (Jain's
//            index in the caption), the summary figures
//   suite    per case, a bar per transport (throughput cases and transaction cases apart)
//   sweep    per row, the figure over the axis: the ideal line on adapter sweeps, the load curve
//            (transactions/s and response time, peak and CPU saturation marked) on flow sweeps
//   compare  per workload, a bar per configuration (median) with its confidence interval, the
//            samples and the verdict beside it
//   fleet    per transport and figure, the N x N heatmap (cells scaled to the best pair, failed
//            cells apart; above 256 ranks a raster image, a pixel per pair, with the group matrix
//            beside it), the worst rows and columns, a histogram of the pairs' figures
//
// The documents are read as data, never trusted: every string from them is escaped, a field
// that is missing, of another type or not finite is shown as "–", and nothing throws once
// document_kind() accepted a document. No state is shared: callable from any thread.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace mtperf {

enum class DocumentKind { run, suite, sweep, compare, fleet, fleet_compare };

// "run", "suite", "sweep", "compare", "fleet", "fleet compare".
std::string_view to_string(DocumentKind k);

// The kind of document, told by its top-level keys (`compare`, `suite`, `sweep`, or `test` and
// `summary` for a run), after checking that this mtperf reads its `schema` (run 1, suite 1,
// compare 1, sweep 2 and 3). Throws std::runtime_error with what is wrong: "not an mtperf
// document (...)", "sweep schema 4: this mtperf reads sweep schemas 2 and 3".
DocumentKind document_kind(const nlohmann::json& doc);

struct ReportInput {
  std::string name;  // where it came from (a file name), shown with its section
  nlohmann::json doc;
};

// One <section> of the page: the document's heading, charts and tables. Throws as
// document_kind().
std::string html_section(const ReportInput& input);

// The whole page, "<!DOCTYPE html>...": a contents list, then one section per input in order.
// Throws as document_kind(), before anything is written.
std::string html_report(const std::vector<ReportInput>& inputs,
                        std::string_view title = "mtperf report");

}  // namespace mtperf
