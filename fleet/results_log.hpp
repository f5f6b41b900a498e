#pragma once
// --results-log FILE: every pair's result as a line of JSON (JSON Lines), written and flushed
// as each step's RESULTS arrive, so that what a long fleet measured is on disk while it runs
// and survives a coordinator that is killed or a host that fails before the document is
// written. A line is the pair's entry of the document's "results" (fleet.schema.json) with the
// names it refers to beside it: {"transport_name", "src_host", "dst_host", ...}. A retested
// pair has a line per try ("tries"); the last line of a pair is its result in the document.
#include <cstdio>
#include <string>

#include "fleet/model.hpp"

namespace mtperf::fleet {

class ResultsLog {
 public:
  // Creates (or truncates) `path`; throws std::runtime_error naming it when it cannot.
  explicit ResultsLog(const std::string& path);
  ~ResultsLog();
  ResultsLog(const ResultsLog&) = delete;
  ResultsLog& operator=(const ResultsLog&) = delete;

  // One line; a failed write is named once on stderr and the run goes on (the document is
  // still written at the end).
  void write(const FleetDoc& d, const PairResult& r);
  size_t lines() const { return lines_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  size_t lines_ = 0;
  bool failed_ = false;
};

}  // namespace mtperf::fleet
