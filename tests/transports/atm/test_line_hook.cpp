// The emulated ATM line as clip's and lane's line hook: what it reads of `mtperf atm up`'s state
// files, and the line options it refuses before it builds anything (no root needed).
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "atmlink/line_flags.hpp"
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
  const std::string rate =
      "option --atm-rate: expected a whole number in 1..100,000,000, oc3, "
      "oc3c, oc12 or oc12c, got '";
  const std::string mtu = "option --atm-mtu: expected a whole number in 68..65527 or 0, got '";
  CHECK_THROWS_MATCHES(hook.build("clip", 1, {{"rate", "OC3"}}), RequestError,
                       Catch::Message(rate + "OC3'"));
  CHECK_THROWS_MATCHES(hook.build("lane", 1, {{"mtu", "20"}}), RequestError,
                       Catch::Message(mtu + "20'"));
  // A range error at either end, and a unit a cell rate does not take.
  CHECK_THROWS_MATCHES(hook.build("clip", 1, {{"mtu", "65528"}}), RequestError,
                       Catch::Message(mtu + "65528'"));
  CHECK_THROWS_MATCHES(hook.build("clip", 1, {{"mtu", "9k"}}), RequestError,
                       Catch::Message(mtu + "9k'"));
  CHECK_THROWS_MATCHES(hook.build("clip", 1, {{"rate", "100k"}}), RequestError,
                       Catch::Message(rate + "100k'"));
  CHECK_THROWS_MATCHES(hook.build("clip", 1, {{"rate", "200000000"}}), RequestError,
                       Catch::Message(rate + "200000000'"));
  CHECK_THROWS_AS(hook.build("token-ring", 1, {}), std::invalid_argument);
}

TEST_CASE("the ATM line flags are one table: run's hook and atm up read the same types") {
  const std::vector<LineOption> flags = atm::atm_line_hook().run_options();
  REQUIRE(flags.size() == atm::atm_line_flags().size());
  for (size_t i = 0; i < flags.size(); ++i) {
    CHECK(flags[i].flag == atm::atm_line_flags()[i].flag);
    CHECK(flags[i].info.type == atm::atm_line_flags()[i].info.type);
  }
  // Every flag's default is a value it takes, and each capture flag is its -O key's twin.
  for (const LineOption& f : flags)
    CHECK_NOTHROW(parse_flag_options(std::span<const LineOption>(&f, 1), {}));
  const std::vector<OptionInfo> o = atm::capture_option_list();
  for (const OptionInfo& key : o) {
    auto it = std::find_if(flags.begin(), flags.end(),
                           [&](const LineOption& f) { return f.info.key == key.key; });
    REQUIRE(it != flags.end());
    CHECK(it->info.default_value == key.default_value);
    CHECK(it->info.lo == key.lo);
    CHECK(it->info.hi == key.hi);
  }
  // The words and numbers a rate takes.
  const OptionValues v =
      parse_flag_options(atm::atm_rate_and_mtu_flags(), {{"rate", "oc3"}, {"mtu", "0"}});
  CHECK(atm::line_rate_of(v).cells_per_s() == Approx(353207.5));
  CHECK(atm::line_mtu_of(v) == 0);
  const OptionValues w =
      parse_flag_options(atm::atm_rate_and_mtu_flags(), {{"rate", "100000"}, {"mtu", "1500"}});
  CHECK(atm::line_rate_of(w).cells_per_s() == Approx(100000));
  CHECK(atm::line_mtu_of(w) == 1500);
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
