#include <catch2/catch.hpp>

#include "platform/affinity.hpp"
#include "platform/rusage.hpp"

using namespace mtperf;

TEST_CASE("the process's own CPU", "[rusage]") {
  const auto before = read_process_cpu();
  volatile double x = 0;
  for (int i = 0; i < 20000000; ++i)
    x = x + i * 0.5;
  const auto d = process_cpu_delta(before, read_process_cpu());
  CHECK(d.user_s >= 0.0);
  CHECK(d.sys_s >= 0.0);
  CHECK(d.cpu_s() > 0.0);
  CHECK(process_cpu_percent(d, 0.0) == 0.0);
  ProcessCpu one{.user_s = 1.5, .sys_s = 0.5};
  CHECK(process_cpu_percent(one, 4.0) == 50.0);
}

TEST_CASE("the process reports its affinity mask and one id", "[rusage]") {
  const ProcessCpu p = read_process_cpu();
  CHECK(p.allowed_cpus >= 1);
  CHECK(p.allowed_cpus <= online_cpu_count());
  CHECK(p.instance != 0);
  CHECK(p.instance == read_process_cpu().instance);
  CHECK(p.instance == process_instance());
  CHECK(process_cpu_delta(ProcessCpu{}, p).allowed_cpus == p.allowed_cpus);
}
