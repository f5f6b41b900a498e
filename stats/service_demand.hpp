#pragma once
// Service demand as netperf defines it: the CPU time the measured work cost per unit of work,
//   SD [us/unit] = (util_percent / 100) * cpus * elapsed_s * 1e6 / units,
// where util_percent is the utilization of all the host's CPUs together (0..100), cpus the
// number of CPUs it averages over, and units the work done in the window: kilobytes
// (1 KB = 1024 bytes, as netperf) for streams, transactions for rr/crr.

namespace mtperf {

inline constexpr double kBytesPerServiceDemandKb = 1024.0;

// Microseconds of CPU per unit. Returns 0 when units <= 0 (nothing to divide by; callers report
// the figure as absent) and throws std::invalid_argument for a negative or non-finite input.
double service_demand_us_per_unit(double util_percent, int cpus, double elapsed_s, double units);

// Microseconds of CPU per KB (1024 bytes) moved.
double service_demand_us_per_kb(double util_percent, int cpus, double elapsed_s, double bytes);

}  // namespace mtperf
