#include "stats/service_demand.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace mtperf {

double service_demand_us_per_unit(double util_percent, int cpus, double elapsed_s, double units) {
  const bool ok = std::isfinite(util_percent) && util_percent >= 0.0 && cpus >= 0 &&
                  std::isfinite(elapsed_s) && elapsed_s >= 0.0 && std::isfinite(units);
  if (!ok) {
    throw std::invalid_argument("service demand: bad input (util " + std::to_string(util_percent) +
                                " %, " + std::to_string(cpus) + " CPUs, " +
                                std::to_string(elapsed_s) + " s, " + std::to_string(units) +
                                " units)");
  }
  if (units <= 0.0) return 0.0;
  return util_percent / 100.0 * cpus * elapsed_s * 1e6 / units;
}

double service_demand_us_per_kb(double util_percent, int cpus, double elapsed_s, double bytes) {
  return service_demand_us_per_unit(util_percent, cpus, elapsed_s,
                                    bytes / kBytesPerServiceDemandKb);
}

}  // namespace mtperf
