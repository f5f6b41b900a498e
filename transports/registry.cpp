#include "transports/api/registry.hpp"

#include <stdexcept>

#include "transports/socket/register.hpp"
#ifdef MTPERF_HAVE_URING
#include "transports/uring/register.hpp"
#endif
#ifdef MTPERF_HAVE_RDMA
#include "transports/rdma/register.hpp"
#endif
#ifdef MTPERF_HAVE_ATM
#include "transports/atm/emu/register.hpp"
#endif

namespace mtperf {

std::span<const TransportEntry> transports() {
  static const std::vector<TransportEntry> all = [] {
    std::vector<TransportEntry> v{socket_transport_entry()};
#ifdef MTPERF_HAVE_URING
    v.push_back(uring_transport_entry());
#endif
#ifdef MTPERF_HAVE_RDMA
    v.push_back(rdma_transport_entry());
#endif
#ifdef MTPERF_HAVE_ATM
    v.push_back(clip_transport_entry());
    v.push_back(lane_transport_entry());
#endif
    return v;
  }();
  return all;
}

std::vector<std::pair<std::string, std::string>> transports_not_compiled() {
  std::vector<std::pair<std::string, std::string>> out;
#ifndef MTPERF_HAVE_URING
  out.emplace_back("uring",
                   "not compiled in: liburing >= 2.3 was not found (apt-get install "
                   "liburing-dev) or MTPERF_TRANSPORT_URING=OFF");
#endif
#ifndef MTPERF_HAVE_RDMA
  out.emplace_back("rdma",
                   "not compiled in: libibverbs and librdmacm were not found (apt-get install "
                   "libibverbs-dev librdmacm-dev) or MTPERF_TRANSPORT_RDMA=OFF");
#endif
#ifndef MTPERF_HAVE_ATM
  out.emplace_back("clip", "not compiled in: transports/atm is missing from this source tree");
  out.emplace_back("lane", "not compiled in: transports/atm is missing from this source tree");
#endif
  return out;
}

const TransportEntry& find_transport(std::string_view name) {
  std::string known;
  for (const TransportEntry& e : transports()) {
    if (e.name == name) return e;
    known += (known.empty() ? "" : ", ") + std::string(e.name);
  }
  for (auto& [n, why] : transports_not_compiled()) {
    if (n == name) throw std::invalid_argument("transport '" + n + "' is " + why);
  }
  throw std::invalid_argument("unknown transport '" + std::string(name) + "' (known: " + known +
                              ")");
}

void check_params(const TransportEntry& entry, const TransportParams& params) {
  auto opts = entry.options();
  for (auto& [k, v] : params) {
    bool found = false;
    std::string known;
    for (auto& o : opts) {
      found |= o.key == k;
      known += (known.empty() ? "" : ", ") + o.key;
    }
    if (!found) {
      throw std::invalid_argument("transport " + std::string(entry.name) + " has no option '" + k +
                                  "'" + (known.empty() ? " (it takes none)" : " (" + known + ")"));
    }
  }
}

}  // namespace mtperf
