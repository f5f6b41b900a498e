// The workloads, one line each (a workload is one file in this folder: workloads/kind.hpp).
#include <algorithm>
#include <stdexcept>
#include <vector>

#include "workloads/kind.hpp"

namespace mtperf {

extern const WorkloadKind kStreamKind, kMaertsKind, kBidirKind, kRrKind, kCrrKind;

namespace {

std::vector<const WorkloadKind*>& table() {
  static std::vector<const WorkloadKind*> kinds = {
      &kStreamKind, &kMaertsKind, &kBidirKind, &kRrKind, &kCrrKind,
  };
  return kinds;
}

}  // namespace

std::span<const WorkloadKind* const> workload_kinds() {
  return table();
}

void add_workload_kind(const WorkloadKind& kind) {
  for (const WorkloadKind* k : table())
    if (k->id == kind.id || k->name == kind.name)
      throw std::invalid_argument("workload " + std::string(kind.name) + ": its id or name is " +
                                  std::string(k->name) + "'s");
  table().push_back(&kind);
}

const WorkloadKind& kind_of(Workload w) {
  for (const WorkloadKind* k : table())
    if (k->id == w) return *k;
  return *table()[0];  // unreachable: every Workload has its line (tests/workloads/test_kinds.cpp)
}

const WorkloadKind* find_kind(std::string_view name) {
  for (const WorkloadKind* k : table())
    if (k->name == name) return k;
  return nullptr;
}

std::string workload_names(std::string_view sep, std::string_view last) {
  const auto& kinds = table();
  std::string s;
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (i > 0) s += i + 1 == kinds.size() && !last.empty() ? last : sep;
    s += kinds[i]->name;
  }
  return s;
}

uint32_t stream_depth(const Caps& caps) {
  if (caps.stream_depth != 0) return caps.stream_depth;
  return std::clamp<uint32_t>(caps.max_outstanding / 8, 1, kShallowStream);
}

uint32_t stream_buffer_size(const TestSpec& spec) {
  uint32_t size = spec.stream_msg_size();
  if (spec.proto == Proto::tcp) size = std::max<uint32_t>(size, 64 * 1024);
  return size;
}

uint32_t transaction_buffer_size(const TestSpec& spec) {
  uint32_t one = std::max(spec.req_size, spec.resp_size);
  uint64_t burst = spec.proto == Proto::udp ? one : uint64_t(one) * spec.burst;
  return uint32_t(std::max<uint64_t>(one, std::min<uint64_t>(burst, kMaxGatherBytes)));
}

}  // namespace mtperf
