// The server's figures travel to the client in the RESULT frame; what arrives is what was sent,
// and a malformed result names the field.
#include <catch2/catch.hpp>

#include "control/side_json.hpp"

using namespace mtperf;

namespace {

SideResult a_result() {
  SideResult r;
  r.side = Side::server;
  r.window_s = 1.0042;
  for (uint32_t i = 0; i < 2; ++i) {
    FlowResult f;
    f.id = i;
    f.role = i == 0 ? Role::receiver : Role::sender;
    f.cpu = int(i) + 2;
    f.total = {1000000 + i, 2000000 + i, 30 + i, 40 + i, 5 + i, i};
    f.window = {900000 + i, 1800000 + i, 27 + i, 36 + i, 4 + i, 0};
    f.stats.udp.received = 77;
    f.stats.udp.lost = 3;
    f.stats.udp.reordered = 2;
    f.stats.udp.duplicates = 1;
    f.stats.udp.jitter_ns = 12500;
    if (i == 1) {
      f.stats.tcp_info_valid = true;
      f.stats.tcp_retransmits = 9;
      f.stats.tcp_rtt_us = 31;
      f.stats.tcp_cwnd = 10;
      f.stats.congestion = "cubic";
      f.stats.error = "flow 1: connection reset";
    }
    r.flows.push_back(f);
  }
  r.errors = {"flow 1: connection reset"};
  r.process.user_s = 0.25;
  r.process.sys_s = 0.5;
  CpuUtilization c;
  c.cpus = 2;
  c.total.util = 42.5;
  c.total.user = 10;
  c.total.sys = 30;
  c.total.softirq = 2.5;
  c.total.idle = 57.5;
  CpuUsage one;
  one.util = 85;
  one.sys = 85;
  one.idle = 15;
  c.per_cpu = {{0, one}, {1, CpuUsage{}}};
  r.cpu = c;
  return r;
}

bool same(const CounterValues& a, const CounterValues& b) {
  return a.bytes_sent == b.bytes_sent && a.bytes_recv == b.bytes_recv &&
         a.msgs_sent == b.msgs_sent && a.msgs_recv == b.msgs_recv &&
         a.transactions == b.transactions && a.errors == b.errors;
}

}  // namespace

TEST_CASE("a side's result survives the trip through JSON", "[side_json]") {
  const SideResult r = a_result();
  SideResult back = side_from_json(nlohmann::json::parse(side_to_json(r).dump()));
  CHECK(back.side == Side::server);
  CHECK(back.window_s == r.window_s);
  REQUIRE(back.flows.size() == r.flows.size());
  for (size_t i = 0; i < r.flows.size(); ++i) {
    const FlowResult& a = r.flows[i];
    const FlowResult& b = back.flows[i];
    CAPTURE(i);
    CHECK(b.id == a.id);
    CHECK(b.role == a.role);
    CHECK(b.cpu == a.cpu);
    CHECK(same(b.total, a.total));
    CHECK(same(b.window, a.window));
    CHECK(b.stats.error == a.stats.error);
    CHECK(b.stats.udp.received == a.stats.udp.received);
    CHECK(b.stats.udp.lost == a.stats.udp.lost);
    CHECK(b.stats.udp.reordered == a.stats.udp.reordered);
    CHECK(b.stats.udp.duplicates == a.stats.udp.duplicates);
    CHECK(b.stats.udp.jitter_ns == Approx(a.stats.udp.jitter_ns));
    CHECK(b.stats.tcp_info_valid == a.stats.tcp_info_valid);
    CHECK(b.stats.tcp_retransmits == a.stats.tcp_retransmits);
    CHECK(b.stats.tcp_rtt_us == a.stats.tcp_rtt_us);
    CHECK(b.stats.tcp_cwnd == a.stats.tcp_cwnd);
    CHECK(b.stats.congestion == a.stats.congestion);
  }
  CHECK(back.errors == r.errors);
  CHECK(back.process.user_s == r.process.user_s);
  CHECK(back.process.sys_s == r.process.sys_s);
  REQUIRE(back.cpu);
  CHECK(back.cpu->cpus == 2);
  CHECK(back.cpu->total.util == 42.5);
  CHECK(back.cpu->total.sys == 30);
  CHECK(back.cpu->total.softirq == 2.5);
  REQUIRE(back.cpu->per_cpu.size() == 2);
  CHECK(back.cpu->per_cpu[0].first == 0);
  CHECK(back.cpu->per_cpu[0].second.util == 85);
  CHECK(back.cpu->per_cpu[1].first == 1);
}

TEST_CASE("a result without host CPU figures keeps them absent", "[side_json]") {
  SideResult r = a_result();
  r.cpu.reset();
  nlohmann::json j = side_to_json(r);
  CHECK(j.at("cpu").is_null());
  CHECK_FALSE(side_from_json(j).cpu.has_value());
}

TEST_CASE("a malformed result names the field", "[side_json]") {
  nlohmann::json j = side_to_json(a_result());
  nlohmann::json missing = j;
  missing.erase("window_s");
  CHECK_THROWS_WITH(side_from_json(missing), Catch::Contains("window_s"));
  nlohmann::json mistyped = j;
  mistyped["flows"][0]["total"]["bytes_sent"] = "lots";
  CHECK_THROWS_WITH(side_from_json(mistyped), Catch::Contains("bytes_sent"));
  nlohmann::json role = j;
  role["flows"][1]["role"] = "juggler";
  CHECK_THROWS_WITH(side_from_json(role), Catch::Contains("juggler"));
  CHECK_THROWS_AS(side_from_json(role), std::invalid_argument);
}

TEST_CASE("a RESULT's integers are read without narrowing", "[side_json]") {
  nlohmann::json j = side_to_json(a_result());
  nlohmann::json big = j;
  big["flows"][0]["id"] = (uint64_t(1) << 32) + 1;  // used to become flow 1
  CHECK_THROWS_WITH(side_from_json(big),
                    Catch::Contains("result.id") && Catch::Contains("out of range"));
  nlohmann::json negative = j;
  negative["flows"][0]["window"]["bytes_sent"] = -1;  // used to become 2^64 - 1
  CHECK_THROWS_WITH(side_from_json(negative), Catch::Contains("result.bytes_sent"));
  nlohmann::json fraction = j;
  fraction["flows"][1]["tcp_info"]["cwnd"] = 10.5;
  CHECK_THROWS_WITH(side_from_json(fraction), Catch::Contains("result.cwnd"));
  nlohmann::json cpus = j;
  cpus["cpu"]["cpus"] = int64_t(1) << 40;
  CHECK_THROWS_WITH(side_from_json(cpus), Catch::Contains("result.cpus"));
}

TEST_CASE("a RESULT's lists are bounded", "[side_json]") {
  nlohmann::json j = side_to_json(a_result());
  nlohmann::json many = j;
  many["flows"] = nlohmann::json::array();
  for (uint32_t i = 0; i <= kLimits.max_flows_total; ++i)
    many["flows"].push_back(nlohmann::json::object());
  CHECK_THROWS_WITH(side_from_json(many),
                    Catch::Contains("result.flows") && Catch::Contains("more than"));
  nlohmann::json not_list = j;
  not_list["flows"] = nlohmann::json::object();
  CHECK_THROWS_WITH(side_from_json(not_list), Catch::Contains("result.flows"));
}

TEST_CASE("a RESULT's CPU figures are shares of CPU time", "[side_json]") {
  nlohmann::json j = side_to_json(a_result());
  nlohmann::json negative = j;
  negative["cpu"]["util_percent"] = -45.5;  // used to throw out of the report's service demand
  CHECK_THROWS_WITH(side_from_json(negative),
                    Catch::Contains("result.cpu.util_percent") && Catch::Contains("0..100"));
  nlohmann::json over = j;
  over["cpu"]["per_cpu"][0]["sys"] = 768.75;  // an impossible "remote 768.8% of one CPU"
  CHECK_THROWS_WITH(side_from_json(over), Catch::Contains("result.cpu.per_cpu[].sys"));
  nlohmann::json id = j;
  id["cpu"]["per_cpu"][1]["cpu"] = -1;
  CHECK_THROWS_WITH(side_from_json(id), Catch::Contains("result.cpu.per_cpu[].cpu"));
  nlohmann::json full = j;
  full["cpu"]["util_percent"] = 100.0;
  full["cpu"]["idle"] = 0.0;
  CHECK(side_from_json(full).cpu->total.util == 100.0);
}
