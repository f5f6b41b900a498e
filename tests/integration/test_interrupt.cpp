// Ctrl-C and SIGTERM during a run: the test stops at once, the partial result is printed and
// marked interrupted, and mtperf exits 130; a second signal forces the end.
#include <nlohmann/json.hpp>

#include "tests/integration/interrupt_support.hpp"

using namespace mtperf::test;

TEST_CASE("SIGINT mid-run: a partial result marked interrupted, exit 130") {
  Child c = spawn_mtperf({"run", "-l", "30", "--warmup", "0.2", "-q", "--format", "json"});
  // The signal once the test is under way (its connections up, however long the start took on
  // this host), then the warm-up and a second of measuring.
  CHECK(wait_established(c, 3, 30));
  usleep(1'200'000);
  kill(c.pid, SIGINT);
  int rc = wait_exit(c, 8);
  std::string out = output_of(c);
  INFO(out);
  REQUIRE(rc == 130);
  auto report = nlohmann::json::parse(out);
  CHECK(report["summary"]["interrupted"] == true);
  double window = report["summary"]["window_s"].get<double>();
  CHECK(window > 0.3);
  CHECK(window < 5);
  CHECK(report["summary"]["throughput_bps"].get<double>() > 0);
}

TEST_CASE("SIGTERM mid-run of a rr test prints the text report with the interrupted line") {
  Child c = spawn_mtperf({"run", "-w", "rr", "-l", "30", "--warmup", "0.2", "-q"});
  usleep(1'500'000);
  kill(c.pid, SIGTERM);
  int rc = wait_exit(c, 8);
  std::string out = output_of(c);
  INFO(out);
  CHECK(rc == 130);
  CHECK(out.find("INTERRUPTED: a partial result") != std::string::npos);
}

TEST_CASE("a second SIGINT forces the end, still with exit 130") {
  Child c = spawn_mtperf({"run", "-P", "4", "-l", "30", "--warmup", "0.2", "-q"});
  usleep(1'500'000);
  kill(c.pid, SIGINT);
  usleep(20'000);
  kill(c.pid, SIGINT);
  int rc = wait_exit(c, 8);
  output_of(c);
  CHECK(rc == 130);
}

TEST_CASE("SIGINT stops the remaining iterations") {
  Child c =
      spawn_mtperf({"run", "-l", "2", "--warmup", "0.2", "-i", "10", "-q", "--format", "json"});
  usleep(1'000'000);
  kill(c.pid, SIGINT);
  int rc = wait_exit(c, 8);
  std::string out = output_of(c);
  INFO(out);
  REQUIRE(rc == 130);
  CHECK(nlohmann::json::parse(out)["iterations"].size() == 1);
}

TEST_CASE("SIGINT during the suite ends it with the cases measured so far, exit 130") {
  Child c = spawn_mtperf({"suite", "-l", "5"});
  usleep(2'500'000);
  kill(c.pid, SIGINT);
  int rc = wait_exit(c, 30);
  std::string out = output_of(c);
  INFO(out);
  CHECK(rc == 130);
  CHECK(out.find("(interrupted)") != std::string::npos);
}
