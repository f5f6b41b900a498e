#include "fleet/results_log.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace mtperf::fleet {
namespace {

std::string host_name_of(const FleetDoc& d, uint32_t rank) {
  return rank < d.roster.size() ? d.roster[rank].host : "";
}

}  // namespace

ResultsLog::ResultsLog(const std::string& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "we");
  if (!file_) throw std::runtime_error("--results-log " + path + ": " + std::strerror(errno));
}

ResultsLog::~ResultsLog() {
  if (file_) std::fclose(file_);
}

void ResultsLog::write(const FleetDoc& d, const PairResult& r) {
  nlohmann::json j = to_json(r);
  j["transport_name"] = r.transport < d.transports.size() ? d.transports[r.transport] : "";
  j["src_host"] = host_name_of(d, r.pair.src);
  j["dst_host"] = host_name_of(d, r.pair.dst);
  const std::string line = j.dump() + "\n";
  const bool ok =
      std::fwrite(line.data(), 1, line.size(), file_) == line.size() && std::fflush(file_) == 0;
  if (ok) {
    ++lines_;
  } else if (!failed_) {
    failed_ = true;
    std::fprintf(stderr, "mtperf fleet: --results-log %s: %s; the document is still written\n",
                 path_.c_str(), std::strerror(errno));
  }
}

}  // namespace mtperf::fleet
