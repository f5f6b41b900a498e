#include <stdexcept>

#include <catch2/catch.hpp>

#include "stats/service_demand.hpp"

using namespace mtperf;

TEST_CASE("service demand as netperf defines it", "[service_demand]") {
  // 25 % of 8 CPUs for 10 s is 20 CPU-seconds; over 1e6 transactions that is 20 us each.
  CHECK(service_demand_us_per_unit(25.0, 8, 10.0, 1e6) == Approx(20.0).epsilon(1e-15));
  // 10 % of 4 CPUs for 10 s moving 11.75 GB (10 s at 9.4 Gbit/s): 4 s of CPU over 11474609.375 KB.
  const double bytes = 9.4e9 / 8 * 10;
  CHECK(service_demand_us_per_kb(10.0, 4, 10.0, bytes) ==
        Approx(4e6 / (bytes / 1024)).epsilon(1e-15));
  CHECK(service_demand_us_per_unit(50.0, 2, 5.0, 0.0) == 0.0);
  CHECK_THROWS_AS(service_demand_us_per_unit(-1.0, 2, 5.0, 1.0), std::invalid_argument);
}
