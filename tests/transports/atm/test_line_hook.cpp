// The emulated ATM line as clip's and lane's line hook: what it reads of `mtperf atm up`'s state
// files, and the line options it refuses before it builds anything (no root needed).
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "platform/request_error.hpp"
#include "transports/atm/hook.hpp"
#include "transports/atm/register.hpp"

using namespace mtperf;

namespace {

struct StateDir {
  std::string path = std::filesystem::temp_directory_path() /
                     ("mtperf-test-atm-line-" + std::to_string(::getpid()));
  StateDir() { std::filesystem::create_directories(path); }
  ~StateDir() { std::filesystem::remove_all(path); }
  void write(const std::string& file, const std::string& text) const {
    std::ofstream(path + "/" + file) << text;
  }
};

}  // namespace

TEST_CASE("clip and lane share the ATM line hook") {
  CHECK(clip_transport_entry().line == &atm::atm_line_hook());
  CHECK(lane_transport_entry().line == &atm::atm_line_hook());
  const LineCommands* c = atm::atm_line_hook().commands();
  REQUIRE(c != nullptr);
  CHECK(c->group == "atm");
  CHECK(atm::atm_line_hook().option_name("rate") == "--atm-rate");
}

TEST_CASE("the ATM line hook lists the testbeds `mtperf atm up` keeps, by their state files") {
  StateDir dir;
  dir.write("atm-one.json",
            R"({"kind": "lane", "namespaces": ["mtperf-1-one-near", "mtperf-1-one-far"]})");
  dir.write("atm-one.stats.json", "{}");  // the counters, not a testbed
  dir.write("testbed-veth.json", "{}");   // a veth testbed's
  dir.write("atm-broken.json", "{not json");
  auto lines = atm::atm_line_hook().lines_up(dir.path);
  std::sort(lines.begin(), lines.end(),
            [](const LineUp& a, const LineUp& b) { return a.name < b.name; });
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].name == "broken");
  CHECK(lines[0].transport.empty());
  CHECK(lines[0].text == "unreadable state file " + dir.path + "/atm-broken.json");
  CHECK(lines[1].name == "one");
  CHECK(lines[1].transport == "lane");
  CHECK(lines[1].namespaces == std::vector<std::string>{"mtperf-1-one-near", "mtperf-1-one-far"});
  CHECK(lines[1].what == "an emulated ATM testbed");
  CHECK(lines[1].text == "emulated ATM testbed one (see mtperf atm status)");
}

TEST_CASE("the ATM line hook refuses line options that do not parse, naming them as typed") {
  const LineHook& hook = atm::atm_line_hook();
  CHECK_THROWS_MATCHES(hook.build("clip", 1, {{"rate", "OC3"}}), RequestError,
                       Catch::Message("option --atm-rate: line rate 'OC3' is not oc3, oc12 or a "
                                      "number of cells per second"));
  CHECK_THROWS_MATCHES(hook.build("lane", 1, {{"mtu", "20"}}), RequestError,
                       Catch::Message("option --atm-mtu: 20 is outside 68..65527"));
  // A range error at either end, and a unit a cell rate does not take.
  CHECK_THROWS_MATCHES(hook.build("clip", 1, {{"mtu", "65528"}}), RequestError,
                       Catch::Message("option --atm-mtu: 65528 is outside 68..65527"));
  CHECK_THROWS_MATCHES(
      hook.build("clip", 1, {{"mtu", "9k"}}), RequestError,
      Catch::Message("option --atm-mtu: 9k is not a whole number of bytes (68..65527, or 0)"));
  CHECK_THROWS_MATCHES(hook.build("clip", 1, {{"rate", "100k"}}), RequestError,
                       Catch::Message("option --atm-rate: line rate '100k' is not oc3, oc12 or a "
                                      "number of cells per second"));
  CHECK_THROWS_WITH(hook.build("clip", 1, {{"rate", "200000000"}}),
                    Catch::Contains("option --atm-rate: line rate") &&
                        Catch::Contains("cells/s is out of range: give 1 to 100000000"));
  CHECK_THROWS_AS(hook.build("token-ring", 1, {}), std::invalid_argument);
}

TEST_CASE("an erf-aal5 capture is refused where the MTU allows PDUs ERF cannot hold") {
  const LineHook& hook = atm::atm_line_hook();
  const std::string file = std::filesystem::temp_directory_path() /
                           ("mtperf-test-erf-" + std::to_string(::getpid()) + ".pcapng");
  // LLC/SNAP's 8 bytes and the trailer's 8 on 1,364 cells: an MTU of 65,456 is the most.
  CHECK_THROWS_WITH(
      hook.build("clip", 1, {{"mtu", "65457"}, {"capture", file}, {"capture_format", "erf-aal5"}}),
      Catch::Contains("at most 65515 bytes") && Catch::Contains("MTU 65457 makes PDUs of 65520") &&
          Catch::Contains("give --mtu 65456 or less"));
  CHECK_FALSE(std::filesystem::exists(file));  // refused before the file was made
}
