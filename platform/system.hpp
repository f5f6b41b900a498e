#pragma once
// Facts about the host a result was measured on: name, kernel, CPU model and count.
#include <string>

namespace mtperf {

struct SystemFacts {
  std::string host;
  std::string kernel;     // uname -r
  std::string machine;    // uname -m
  std::string cpu_model;  // first "model name" of <root>/proc/cpuinfo, "" when absent
  int online_cpus = 0;
};

SystemFacts read_system_facts(const std::string& root = "/");

}  // namespace mtperf
