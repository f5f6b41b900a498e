#include <regex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "report/compare.hpp"

using namespace mtperf;

namespace {

CompareCell cell(std::vector<double> values, double demand = 1.5) {
  CompareCell c;
  for (double v : values) {
    CompareSample s;
    s.value = v;
    s.local_demand = demand;
    c.samples.push_back(s);
  }
  return c;
}

Compare two_configs(std::vector<double> a, std::vector<double> b) {
  Compare c;
  c.configs = {{"socket", {"-T", "socket"}}, {"uring", {"-T", "uring"}}};
  c.iterations = int(a.size());
  c.length_s = 5;
  c.hosts = "loopback, an in-process server";
  CompareRow row;
  row.workload = "rr";
  row.figure = CompareFigure::transaction_rate;
  row.demand_unit = "us/transaction";
  row.cells = {cell(a), cell(b, 1.2)};
  c.rows.push_back(row);
  return c;
}

}  // namespace

TEST_CASE("compare plan interleaves and alternates the order", "[compare]") {
  const auto plan = compare_plan(3, 2, 2);
  REQUIRE(plan.size() == 12);
  // Iteration 0: A B on each row; iteration 1: B A; iteration 2: A B again.
  std::vector<size_t> configs;
  for (const auto& s : plan)
    configs.push_back(s.config);
  CHECK(configs == std::vector<size_t>{0, 1, 0, 1, 1, 0, 1, 0, 0, 1, 0, 1});
  CHECK(plan[4].iteration == 1);
  CHECK(plan[6].row == 1);
  // Every cell gets each iteration exactly once.
  std::vector<int> count(4);
  for (const auto& s : plan)
    ++count[s.row * 2 + s.config];
  CHECK(count == std::vector<int>{3, 3, 3, 3});
}

TEST_CASE("compare verdicts: faster, slower, no difference, too few", "[compare]") {
  SECTION("clearly faster") {
    Compare c = two_configs({100, 101, 99, 100, 102}, {120, 121, 119, 122, 120});
    const CellStats s = cell_stats(c, c.rows[0], 1);
    CHECK(s.verdict == Verdict::faster);
    CHECK(*s.ratio == Approx(1.2));
    CHECK(s.test.p_value < 0.001);
    CHECK(verdict_text(s).starts_with("faster 1.20x (p="));
    CHECK(cell_stats(c, c.rows[0], 0).verdict == Verdict::baseline);
    CHECK(*cell_stats(c, c.rows[0], 0).ratio == 1.0);
  }
  SECTION("clearly slower") {
    Compare c = two_configs({100, 101, 99, 100, 102}, {80, 81, 79, 82, 80});
    CHECK(cell_stats(c, c.rows[0], 1).verdict == Verdict::slower);
  }
  SECTION("the same figures say no difference") {
    Compare c = two_configs({100, 104, 97, 101, 99}, {101, 99, 103, 98, 100});
    const CellStats s = cell_stats(c, c.rows[0], 1);
    CHECK(s.verdict == Verdict::no_difference);
    CHECK(verdict_text(s).starts_with("no difference (p="));
  }
  SECTION("a difference inside the noise is no difference") {
    Compare c = two_configs({100, 130, 80, 115, 90}, {105, 135, 85, 120, 95});
    CHECK(cell_stats(c, c.rows[0], 1).verdict == Verdict::no_difference);
  }
  SECTION("the level decides") {
    Compare c = two_configs({100, 102, 98, 101, 99}, {102, 104, 100, 103, 101});
    const double p = cell_stats(c, c.rows[0], 1).test.p_value;
    REQUIRE(p > 0.01);
    REQUIRE(p < 0.1);
    c.level = 0.90;
    CHECK(cell_stats(c, c.rows[0], 1).verdict == Verdict::faster);
    c.level = 0.99;
    CHECK(cell_stats(c, c.rows[0], 1).verdict == Verdict::no_difference);
  }
  SECTION("failed runs are left out, and one figure is too few") {
    Compare c = two_configs({100, 101, 99}, {120});
    CompareSample failed;
    failed.errors = {"flow 0: connect: refused"};
    c.rows[0].cells[1].samples.push_back(failed);
    const CellStats s = cell_stats(c, c.rows[0], 1);
    CHECK(s.measured == 1);
    CHECK(s.failed == 1);
    CHECK(s.verdict == Verdict::too_few);
    CHECK(verdict_text(s) == "too few runs");
    CHECK_FALSE(s.interval.valid);
  }
  SECTION("another baseline") {
    Compare c = two_configs({100, 101, 99, 100, 102}, {120, 121, 119, 122, 120});
    c.baseline = 1;
    CHECK(cell_stats(c, c.rows[0], 0).verdict == Verdict::slower);
    CHECK(*cell_stats(c, c.rows[0], 0).ratio == Approx(100.0 / 120.0));
  }
}

TEST_CASE("compare renderers carry every cell", "[compare]") {
  Compare c = two_configs({100, 101, 99, 100, 102}, {120, 121, 119, 122, 120});
  CompareRow stream;
  stream.workload = "stream";
  stream.figure = CompareFigure::throughput;
  stream.demand_unit = "us/KB";
  stream.cells = {cell({9e9, 9.1e9, 8.9e9}), cell({9.5e9, 9.4e9, 9.6e9}, 1.2)};
  c.rows.push_back(stream);
  const std::string text = compare_text(c);
  CHECK(text.find("rr: transactions/s") != std::string::npos);
  CHECK(text.find("stream: throughput, Mbit/s") != std::string::npos);
  CHECK(text.find("9000.00") != std::string::npos);  // the median in Mbit/s
  CHECK(text.find("faster 1.20x") != std::string::npos);
  CHECK(text.find("baseline") != std::string::npos);

  const std::string csv = compare_csv(c);
  CHECK(csv.find("workload,configuration,figure,measured,failed,median") == 0);
  CHECK(csv.find("stream,uring,throughput_bps,3,0,9500000000,") != std::string::npos);
  CHECK(csv.find("rr,socket,transaction_rate,5,0,100,") != std::string::npos);

  const nlohmann::json j = compare_json(c);
  CHECK(j["schema"] == kCompareJsonSchema);
  const auto& rows = j["compare"]["rows"];
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["cells"][1]["verdict"] == "faster");
  CHECK(rows[0]["cells"][0]["p_value"].is_null());
  CHECK(rows[0]["cells"][1]["samples"].size() == 5);
  CHECK(rows[1]["cells"][1]["median"] == Approx(9.5e9));
  CHECK(rows[1]["cells"][1]["local_service_demand"] == Approx(1.2));
  CHECK(j["compare"]["baseline"] == "socket");
}

TEST_CASE("compare's text clips an interval at 0, as its HTML table and chart do", "[compare]") {
  // Three runs far apart: the interval of the mean reaches below 0 (about -1431..2099).
  Compare c = two_configs({1000, 1, 1}, {1000, 1000, 1000});
  const std::string text = compare_text(c);
  std::string line;
  for (size_t at = text.find("\n  socket "); at != std::string::npos;) {
    line = text.substr(at + 1, text.find('\n', at + 1) - at - 1);
    break;
  }
  INFO(text);
  REQUIRE(!line.empty());
  CHECK(line.find(" 0.00..") != std::string::npos);
  CHECK_FALSE(std::regex_search(line, std::regex("-[0-9]")));  // no negative figure
  // The JSON keeps the statistic as computed; a reader clips it for display.
  CHECK(compare_json(c)["compare"]["rows"][0]["cells"][0]["interval"]["lo"].get<double>() < 0);
}
