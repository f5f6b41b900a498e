// The HTML report (report/html.hpp) and its chart primitives (report/svg.hpp): nice ticks, the
// escaping of every string a document brings, and a page for a small hand-made document of each
// kind with its SVG elements, never "nan" or "inf".
#include <cmath>
#include <regex>
#include <stdexcept>

#include <catch2/catch.hpp>

#include "report/html.hpp"
#include "report/png.hpp"
#include "report/svg.hpp"

using namespace mtperf;
using nlohmann::json;

namespace {

// A step between ticks is 1, 2, 2.5 or 5 times a power of ten.
bool nice_step(double step) {
  const double mantissa = step / std::pow(10.0, std::floor(std::log10(step)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (std::abs(mantissa - m) < 1e-9) return true;
  return false;
}

bool has_non_finite_text(const std::string& page) {
  static const std::regex word(R"(\b-?(nan|inf|infinity)\b)", std::regex::icase);
  return std::regex_search(page, word);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

json run_doc() {
  return json::parse(R"({
    "schema": 1,
    "test": {"workload": "rr", "protocol": "tcp", "transport": "sock<et> & co", "flows": 2,
             "duration_s": 1, "warmup_s": 0.5, "request_size": 1, "response_size": 1},
    "environment": {"host": "h<1>", "kernel": "6.1", "machine": "x86_64", "cpus": 2,
                    "mtperf_version": "0.1.0"},
    "summary": {
      "window_s": 1.0, "throughput_bps": 714202, "throughput_c2s_bps": 357101,
      "throughput_s2c_bps": 357101, "transactions": 44831, "transaction_rate": 44827,
      "latency_us": {"count": 44831, "mean": 22.4, "stddev": 1266, "min": 3.9, "max": 260987,
                     "p50": 4.8, "p90": 8.9, "p99": 15.1, "p99_9": 4186},
      "jain_fairness": 0.98, "min_max_ratio": 0.8,
      "local_cpu": {"util_percent": 100, "user": 38.2, "sys": 41.2, "irq": 0, "softirq": 20.6,
                    "iowait": 0, "steal": 0, "idle": 0, "cpus": 2, "per_cpu": []},
      "remote_cpu": null,
      "service_demand": {"local": {"value": 44.6, "unit": "us/transaction"}, "remote": null},
      "one_process": false,
      "flows": [{"id": 0, "direction": "rr", "throughput_bps": 400000, "transaction_rate": 25000,
                 "error": null},
                {"id": 1, "direction": "rr", "throughput_bps": 314202, "transaction_rate": 19827,
                 "error": "reset <by> peer"}],
      "errors": ["server flow 1: reset <by> peer & gone"],
      "interrupted": false
    },
    "iterations": [{}],
    "confidence": null
  })");
}

json compare_doc() {
  return json::parse(R"({
    "schema": 1,
    "compare": {
      "iterations": 3, "length_s": 0.5, "level": 0.95, "baseline": "socket",
      "hosts": "loopback", "common_args": ["-l", "0.5"],
      "configurations": [{"name": "socket", "args": ["-T", "socket"]},
                         {"name": "cc=<bbr>", "args": ["-O", "cc=bbr"]}],
      "rows": [{"workload": "stream", "figure": "throughput_bps", "service_demand_unit": "us/KB",
        "cells": [
          {"configuration": "socket", "samples": [{"value": 7e9, "local_service_demand": 2.1,
            "remote_service_demand": null, "errors": []}], "measured": 3, "failed": 0,
           "median": 7.8e9, "mean": 9.5e9, "interval": {"lo": -2.2e7, "hi": 1.9e10},
           "ratio": 1.0, "t": null, "df": null, "p_value": null, "verdict": "baseline",
           "local_service_demand": 2.1, "remote_service_demand": null},
          {"configuration": "cc=<bbr>", "samples": [{"value": null, "local_service_demand": null,
            "remote_service_demand": null, "errors": ["refused & <gone>"]}], "measured": 2,
           "failed": 1, "median": 9.1e9, "mean": 9.0e9, "interval": {"lo": 8e9, "hi": 1e10},
           "ratio": 1.17, "t": 2.5, "df": 3.1, "p_value": 0.0004, "verdict": "faster",
           "local_service_demand": 1.9, "remote_service_demand": null}]}]
    }
  })");
}

json sweep_doc(int schema, const std::string& axis) {
  json cells = json::array();
  const std::vector<int> at = {1, 2, 4};
  for (size_t i = 0; i < at.size(); ++i) {
    json c = {{"throughput_bps", nullptr},
              {"transaction_rate", 10000.0 * at[i]},
              {"local_cpu_percent", 50.0 * at[i] / 2},
              {"remote_cpu_percent", 99.5},
              {"local_service_demand", 12.5},
              {"remote_service_demand", nullptr},
              {"errors", i == 2 ? json{"late <reply>"} : json::array()}};
    if (schema == 2) {
      c["adapters"] = at[i];
      c["jain_fairness_adapters"] = nullptr;
      c["scaling_efficiency"] = 1.0;
    } else {
      c["at"] = at[i];
      c["latency_mean_us"] = 20.0 * at[i];
      c["latency_p99_us"] = 45.0 * at[i];
    }
    cells.push_back(c);
  }
  json row = {{"name", "tcp-rr"},
              {"label", "TCP rr <1> & more"},
              {"figure", "transaction_rate"},
              {"cells", cells}};
  json sweep = {{"transport", "socket"}, {"hosts", "a -> b"}, {"length_s", 0.3}};
  if (schema == 2) {
    sweep["adapters"] = at;
  } else {
    row["service_demand_unit"] = "us/transaction";
    row["peak_at"] = 4;
    row["cpu_saturated_at"] = 2;
    sweep["axis"] = {{"name", axis}, {"values", at}};
  }
  sweep["rows"] = json::array({row});
  return {{"schema", schema}, {"sweep", sweep}};
}

json suite_doc() {
  json stream_report = {{"test", {{"workload", "stream"}}},
                        {"summary",
                         {{"throughput_bps", 4.95e9},
                          {"transaction_rate", 0},
                          {"local_cpu", {{"util_percent", 100}}},
                          {"errors", {}}}}};
  json rr_report = {{"test", {{"workload", "rr"}}},
                    {"summary",
                     {{"throughput_bps", 1e6},
                      {"transaction_rate", 155715},
                      {"local_cpu", nullptr},
                      {"errors", {"slow & <late>"}}}}};
  return {{"schema", 1},
          {"suite",
           {{"length_s", 0.2},
            {"transports", {"socket", "up<x>"}},
            {"unusable", {{{"transport", "rdma"}, {"why", "no <device> & no rxe"}}}},
            {"cases",
             {{{"label", "TCP stream 64K"},
               {"args", {"-w", "stream"}},
               {"results",
                {{{"transport", "socket"},
                  {"status", "ok"},
                  {"report", stream_report},
                  {"message", nullptr}},
                 {{"transport", "up<x>"},
                  {"status", "failed"},
                  {"report", nullptr},
                  {"message", "refused <port>"}}}}},
              {{"label", "TCP rr 1/1"},
               {"args", {"-w", "rr"}},
               {"results",
                {{{"transport", "socket"},
                  {"status", "ok"},
                  {"report", rr_report},
                  {"message", nullptr}},
                 {{"transport", "up<x>"},
                  {"status", "skipped"},
                  {"report", nullptr},
                  {"message", "no UDP"}}}}}}}}}};
}

std::string page_of(const json& doc) {
  return html_report({{"in<put>.json", doc}});
}

// What every page holds: a whole document, no script, no fetch, nothing unescaped.
void check_page(const std::string& page) {
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(page.find("</html>") != std::string::npos);
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("http://") == page.find("http://www.w3.org/2000/svg"));  // the namespace only
  CHECK(page.find("https://") == std::string::npos);
  CHECK(page.find("in&lt;put&gt;.json") != std::string::npos);
  CHECK(page.find("<put>") == std::string::npos);
  CHECK(count(page, "<svg") == count(page, "</svg>"));
  CHECK_FALSE(has_non_finite_text(page));
}

}  // namespace

TEST_CASE("escape turns the characters of markup into references") {
  CHECK(svg::escape("a<b> & \"c\" 'd'") == "a&lt;b&gt; &amp; &quot;c&quot; &#39;d&#39;");
  CHECK(svg::escape("µs ≥ 99%") == "µs ≥ 99%");
}

TEST_CASE("ticks fall on nice numbers and cover the range") {
  struct Range {
    double lo, hi;
  };
  for (const Range r : {Range{0, 47}, Range{0, 1.3}, Range{0, 9.57e9}, Range{0, 44827}, Range{3, 7},
                        Range{0, 0.0042}, Range{-5, 5}, Range{0, 1}}) {
    const auto t = svg::nice_ticks(r.lo, r.hi);
    INFO(r.lo << ".." << r.hi);
    REQUIRE(t.size() >= 2);
    CHECK(t.size() <= 12);
    CHECK(t.front() <= r.lo);
    CHECK(t.back() >= r.hi);
    for (size_t i = 1; i < t.size(); ++i)
      CHECK(nice_step(t[i] - t[i - 1]));
  }
  CHECK(svg::nice_ticks(0, 47) == std::vector<double>{0, 10, 20, 30, 40, 50});
  CHECK(svg::nice_ticks(0, 1.3) == std::vector<double>{0, 0.5, 1, 1.5});
  for (const auto& t :
       {svg::nice_ticks(0, 0), svg::nice_ticks(NAN, 3), svg::nice_ticks(2, INFINITY)}) {
    REQUIRE(t.size() >= 2);
    for (double v : t)
      CHECK(std::isfinite(v));
  }
}

TEST_CASE("log ticks are powers of ten, with 2 and 5 between them over a short span") {
  CHECK(svg::log_ticks(3.9, 260987) == std::vector<double>{1, 10, 100, 1e3, 1e4, 1e5, 1e6});
  CHECK(svg::log_ticks(4, 80) == std::vector<double>{2, 5, 10, 20, 50, 100});
  CHECK(svg::log_ticks(0, -1) == std::vector<double>{1, 2, 5, 10});
}

TEST_CASE("tick labels share one suffix and the step's decimals") {
  CHECK(svg::tick_labels({0, 10000, 20000, 30000}) ==
        std::vector<std::string>{"0", "10k", "20k", "30k"});
  CHECK(svg::tick_labels({0, 0.25, 0.5}) == std::vector<std::string>{"0", "0.25", "0.5"});
  CHECK(svg::tick_labels({0, 2.5e6, 5e6}) == std::vector<std::string>{"0", "2.5M", "5M"});
  CHECK(svg::tick_labels({0, 5, 10}) == std::vector<std::string>{"0", "5", "10"});
  CHECK(svg::compact(4186) == "4186");
  CHECK(svg::compact(44827) == "44.8k");
  CHECK(svg::compact(1e6) == "1M");
  CHECK(svg::compact(4.815) == "4.82");
  CHECK(svg::compact(NAN) == "\u2013");
  CHECK(svg::coord(INFINITY) == "0");
  CHECK(svg::coord(12.345) == "12.35");
  CHECK(svg::coord(3.0) == "3");
}

TEST_CASE("scales map linearly and logarithmically") {
  const svg::Scale lin{0, 100, 50, 250};
  CHECK(lin(0) == Approx(50));
  CHECK(lin(50) == Approx(150));
  const svg::Scale log{1, 1000, 300, 0, true};
  CHECK(log(10) == Approx(200));
  CHECK(log(0) == Approx(300));  // below the domain: at its start
  const svg::Scale flat{5, 5, 0, 10};
  CHECK(flat(5) == Approx(5));
}

TEST_CASE("a canvas writes SVG elements and escapes its text") {
  svg::Canvas c(100, 50, "a <title>");
  c.rect(1, 2, -3, 4, "#fff", "#000");
  c.polyline({{0, 0}, {10, 10}}, "#000", 2, true);
  c.text(5, 5, "x & <y>");
  const std::string s = c.str();
  CHECK(s.find("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100\" height=\"50\"") == 0);
  CHECK(s.find("<title>a &lt;title&gt;</title>") != std::string::npos);
  CHECK(s.find("<rect x=\"-2\" y=\"2\" width=\"3\"") != std::string::npos);
  CHECK(s.find("stroke-dasharray") != std::string::npos);
  CHECK(s.find(">x &amp; &lt;y&gt;</text>") != std::string::npos);
}

TEST_CASE("the document's kind comes from its top-level keys, its schema is checked") {
  CHECK(document_kind(run_doc()) == DocumentKind::run);
  CHECK(document_kind(compare_doc()) == DocumentKind::compare);
  CHECK(document_kind(suite_doc()) == DocumentKind::suite);
  CHECK(document_kind(sweep_doc(3, "flows")) == DocumentKind::sweep);
  CHECK(document_kind(sweep_doc(2, "adapters")) == DocumentKind::sweep);
  CHECK_THROWS_WITH(document_kind(json::array()), Catch::Contains("not an mtperf document"));
  CHECK_THROWS_WITH(document_kind(json{{"hello", 1}}), Catch::Contains("not an mtperf document"));
  json later = sweep_doc(3, "flows");
  later["schema"] = 4;
  CHECK_THROWS_WITH(document_kind(later),
                    Catch::Contains("sweep schema 4: this mtperf reads sweep schemas 2 and 3"));
  json run = run_doc();
  run.erase("schema");
  CHECK_THROWS_WITH(document_kind(run), Catch::Contains("run document without an integer"));
}

TEST_CASE("a run page: latency on a log axis, the CPU split, per-flow bars, the figures") {
  const std::string page = page_of(run_doc());
  check_page(page);
  CHECK(count(page, "<svg") == 3);
  CHECK(page.find("<polyline") != std::string::npos);  // the percentiles
  CHECK(page.find("latency, \u00b5s (log scale)") != std::string::npos);
  CHECK(page.find(">99.9</text>") != std::string::npos);  // the nines axis
  CHECK(page.find(">1M</text>") != std::string::npos);    // log ticks up to the max
  CHECK(page.find(">softirq</text>") != std::string::npos);
  CHECK(page.find("Jain&#39;s fairness index J = 0.980 over 2 flow(s)") != std::string::npos);
  CHECK(page.find("sock&lt;et&gt; &amp; co") != std::string::npos);
  CHECK(page.find("reset &lt;by&gt; peer &amp; gone") != std::string::npos);
  CHECK(page.find("44\u2009827") != std::string::npos);  // the transactions in the table
}

// Issue 40: with several iterations every figure says what it covers.
TEST_CASE("a run page of several iterations labels the mean, the merged and the last") {
  const std::string one = page_of(run_doc());
  CHECK(one.find("iterations)") == std::string::npos);
  json doc = run_doc();
  doc["iterations"] = json::array({json::object(), json::object(), json::object()});
  const std::string page = page_of(doc);
  check_page(page);
  CHECK(page.find("transaction rate, /s (mean of 3 iterations)") != std::string::npos);
  CHECK(page.find("latency p99, \u00b5s (all 3 iterations)") != std::string::npos);
  CHECK(page.find("client host CPU (the last of 3 iterations)") != std::string::npos);
  CHECK(page.find("transaction rate, the last iteration (3 of 3)") != std::string::npos);
}

TEST_CASE("a run page names the flows that did not connect") {
  CHECK(page_of(run_doc()).find("did not connect") == std::string::npos);
  json doc = run_doc();
  doc["summary"]["flows_asked"] = 3;
  doc["summary"]["flows_not_connected"] = {
      {{"flow", 2}, {"error", "connect to 127.0.0.1:40002: Connection <refused>"}}};
  const std::string page = page_of(doc);
  check_page(page);
  CHECK(page.find("1 of 3 flows did not connect; the figures are the others&#39;: 2 (connect to "
                  "127.0.0.1:40002: Connection &lt;refused&gt;).") != std::string::npos);
}

TEST_CASE("a compare page: bars with whiskers, samples and the verdict beside them") {
  const std::string page = page_of(compare_doc());
  check_page(page);
  CHECK(count(page, "<svg") == 1);
  CHECK(count(page, "<rect") >= 2);
  CHECK(count(page, "<circle") == 1);  // the one sample with a value
  CHECK(page.find("faster 1.17\u00d7 (p=&lt;0.001)") != std::string::npos);
  CHECK(page.find(">baseline</text>") != std::string::npos);
  CHECK(page.find("throughput, Gbit/s") != std::string::npos);
  CHECK(page.find("cc=&lt;bbr&gt;") != std::string::npos);
  CHECK(page.find("refused &amp; &lt;gone&gt;") != std::string::npos);
  // The interval clipped at 0 in the table, as the whisker is (docs/cli.md): a rate is not < 0.
  CHECK(page.find(">0 .. 19.0<") != std::string::npos);
  CHECK(page.find("-0.022") == std::string::npos);
}

TEST_CASE("a sweep page: the load curve with latency on a second axis and the marks") {
  const std::string page = page_of(sweep_doc(3, "flows"));
  check_page(page);
  CHECK(count(page, "<polyline") == 3);  // transactions/s, p99, mean
  CHECK(page.find("response time, \u00b5s") != std::string::npos);
  CHECK(page.find(">peak</text>") != std::string::npos);
  CHECK(page.find(">CPU \u2265 99%</text>") != std::string::npos);
  CHECK(page.find("TCP rr &lt;1&gt; &amp; more") != std::string::npos);
  CHECK(page.find("late &lt;reply&gt;") != std::string::npos);
}

TEST_CASE("an adapter sweep has the ideal line; schema 2 is read too") {
  for (int schema : {2, 3}) {
    const std::string page = page_of(sweep_doc(schema, "adapters"));
    INFO("schema " << schema);
    check_page(page);
    CHECK(page.find("sweep over adapters") != std::string::npos);
    CHECK(count(page, "stroke-dasharray") >= 2);  // the ideal line and its legend
    CHECK(page.find("ideal: first \u00d7 n / first n") != std::string::npos);
    CHECK(page.find("40\u2009000") != std::string::npos);  // the ideal at 4 adapters
  }
}

TEST_CASE("a suite page: bars per transport, and why where there is none") {
  const std::string page = page_of(suite_doc());
  check_page(page);
  CHECK(count(page, "<svg") == 2);  // throughput cases, transaction cases
  CHECK(page.find(">up&lt;x&gt;</text>") != std::string::npos);  // the legend
  CHECK(page.find(">failed</text>") != std::string::npos);
  CHECK(page.find(">skipped</text>") != std::string::npos);
  CHECK(page.find("no &lt;device&gt; &amp; no rxe") != std::string::npos);
  CHECK(page.find("failed: refused &lt;port&gt;") != std::string::npos);
}

TEST_CASE("fields missing, mistyped or not finite are shown as a dash") {
  json doc = run_doc();
  doc["summary"]["throughput_bps"] = NAN;
  doc["summary"]["latency_us"]["p99"] = INFINITY;
  doc["summary"]["jain_fairness"] = "high";
  doc["summary"]["flows"][0] = 7;
  doc["test"]["flows"] = nullptr;
  const std::string page = page_of(doc);
  check_page(page);
  json bare = {{"schema", 1}, {"test", json::object()}, {"summary", json::object()}};
  check_page(page_of(bare));
  json sweep = sweep_doc(3, "message_size");
  sweep["sweep"]["rows"][0]["cells"][1]["transaction_rate"] = NAN;
  sweep["sweep"]["rows"][0]["cells"][2] = "?";
  check_page(page_of(sweep));
}

TEST_CASE("several documents make one page with a section each") {
  const std::string page = html_report(
      {{"a.json", run_doc()}, {"b.json", compare_doc()}, {"c.json", suite_doc()}}, "nightly <run>");
  check_page(html_report({{"in<put>.json", run_doc()}}));
  CHECK(count(page, "<section>") == 3);
  CHECK(page.find("<title>nightly &lt;run&gt;</title>") != std::string::npos);
  CHECK(page.find("@media print") != std::string::npos);
  json bad = run_doc();
  bad["schema"] = 9;
  CHECK_THROWS_WITH(html_report({{"a.json", run_doc()}, {"b.json", bad}}),
                    Catch::Contains("run schema 9"));
}

namespace {
// A 3-rank fleet document (docs/json-schema/fleet.schema.json, the fields the page reads): one
// pair failed, one slow.
json fleet_doc() {
  json cells = {{nullptr, 10e9, 9e9}, {10e9, nullptr, nullptr}, {4e9, 9.5e9, nullptr}};
  json results = json::array();
  for (int s = 0; s < 3; ++s)
    for (int d = 0; d < 3; ++d)
      if (s != d)
        results.push_back({{"transport", 0},
                           {"src", s},
                           {"dst", d},
                           {"ok", !(s == 1 && d == 2)},
                           {"error", s == 1 && d == 2 ? "rank 2 <lost>" : ""}});
  json roster = json::array();
  for (int r = 0; r < 3; ++r)
    roster.push_back({{"rank", r}, {"host", "node" + std::to_string(r)}});
  return {{"schema", 1},
          {"fleet",
           {{"size", 3},
            {"launcher", "Slurm"},
            {"workload", "stream"},
            {"transports", {"socket"}},
            {"plan", {{"pattern", "all-pairs"}, {"concurrency", "round"}, {"ordered_pairs", 6}}},
            {"start_spread_max_ns", 5e6},
            {"errors", {"rank 2 (node2) lost: killed"}}}},
          {"roster", roster},
          {"results", results},
          {"matrices",
           {{"socket",
             {{"throughput",
               {{"unit", "bits/s"},
                {"cells", cells},
                {"rows",
                 {{{"rank", 2}, {"cells", 2}, {"min", 4e9}, {"median", 6.75e9}, {"max", 9.5e9}}}},
                {"columns", json::array()}}}}}}}};
}
}  // namespace

TEST_CASE("a fleet page: the heatmap with failed cells apart, worst lines, a histogram") {
  CHECK(document_kind(fleet_doc()) == DocumentKind::fleet);
  json later = fleet_doc();
  later["schema"] = 2;
  CHECK_THROWS_WITH(document_kind(later), Catch::Contains("fleet schema 2"));
  const std::string page = page_of(fleet_doc());
  check_page(page);
  CHECK(page.find("fleet: 3 ranks, stream all-pairs") != std::string::npos);
  CHECK(count(page, "<svg") == 2);                            // the heatmap and the histogram
  CHECK(count(page, "fill=\"#4d4d4d\"") == 1 + 1);            // the failed cell and its key
  CHECK(count(page, "fill=\"#1a9850\"") >= 2);                // the best pairs, green
  CHECK(page.find("fill=\"#d73027\"") != std::string::npos);  // 4G of 10G: red
  CHECK(page.find("best 10G Gbit/s") == std::string::npos);
  CHECK(page.find("best 10 Gbit/s") != std::string::npos);
  CHECK(page.find("node2 2") != std::string::npos);
  CHECK(page.find("rank 2 (node2) lost: killed") != std::string::npos);
  // Issue 40: each measured cell carries its figure (Gbit/s), not its colour alone; the start
  // spread is given where it was measured and said to be missing where it was not.
  CHECK(page.find(">9.5</text>") != std::string::npos);
  CHECK(page.find(">4</text>") != std::string::npos);
  CHECK(page.find("started at most 5.00 ms apart") != std::string::npos);
  json unmeasured = fleet_doc();
  unmeasured["fleet"]["start_spread_max_ns"] = nullptr;
  const std::string without = page_of(unmeasured);
  CHECK(without.find("\u2013 ms") == std::string::npos);
  CHECK(without.find("start spread was not measured") != std::string::npos);
}

TEST_CASE("a fleet page with groups: the heatmap ordered by group, a line between groups") {
  json doc = fleet_doc();
  const char* groups[] = {"leaf2", "leaf1", "leaf2"};
  for (int r = 0; r < 3; ++r)
    doc["roster"][r]["group"] = groups[r];
  const std::string page = page_of(doc);
  check_page(page);
  // leaf2 first (rank 0's group): ranks 0, 2, then leaf1: rank 1.
  const size_t r0 = page.find(">node0 0<"), r2 = page.find(">node2 2<"),
               r1 = page.find(">node1 1<");
  REQUIRE(r0 != std::string::npos);
  REQUIRE(r2 != std::string::npos);
  REQUIRE(r1 != std::string::npos);
  CHECK(r0 < r2);
  CHECK(r2 < r1);
  CHECK(page.find("ordered by group, a line between groups") != std::string::npos);
  CHECK(page_of(fleet_doc()).find("ordered by group") == std::string::npos);
}

TEST_CASE("a fleet compare page: the ratio heatmap and the pairs that moved") {
  // What `mtperf compare a.json b.json --format json` writes for two 3-rank fleet runs.
  const json doc = {
      {"schema", 1},
      {"fleet_compare",
       json::array({{{"a", "a.json socket"},
                     {"b", "b.json socket"},
                     {"figure", "throughput"},
                     {"ratio", json::array({json::array({nullptr, 1.0, 1.02}),
                                            json::array({0.98, nullptr, nullptr}),
                                            json::array({0.5, 1.0, nullptr})})},
                     {"b_rank", json::array({2, 0, 1})},
                     {"moved", json::array({{{"src", 2}, {"dst", 0}, {"ratio", 0.5}}})},
                     {"moved_count", 1}}})}};
  CHECK(document_kind(doc) == DocumentKind::fleet_compare);
  const std::string page = page_of(doc);
  check_page(page);
  CHECK(count(page, "<svg") == 1);
  CHECK(page.find("b.json socket / a.json socket, throughput") != std::string::npos);
  CHECK(page.find("fill=\"#d73027\"") != std::string::npos);  // 0.5: red
  CHECK(page.find(">0.50</text>") != std::string::npos);
  CHECK(page.find("pairs that moved beyond 10%: 1") != std::string::npos);
  CHECK(page.find("<td class=\"n\">0.500</td>") != std::string::npos);
}

namespace {
// An all-pairs fleet document of `n` ranks (groups of `group`, none when 0): every pair at 9 to
// 9.9 Gbit/s, rank `slow`'s both ways at 2 Gbit/s, pair 1->3 failed; the group matrix as
// fleet_json writes it.
json big_fleet_doc(size_t n, size_t group, size_t slow) {
  json doc = fleet_doc();
  doc["fleet"]["size"] = n;
  json roster = json::array(), cells = json::array();
  for (size_t r = 0; r < n; ++r) {
    roster.push_back({{"rank", r}, {"host", "node" + std::to_string(r)}});
    if (group) roster.back()["group"] = "leaf" + std::to_string(r / group);
    json row = json::array();
    for (size_t c = 0; c < n; ++c)
      row.push_back(r == c || (r == 1 && c == 3) ? json(nullptr)
                    : r == slow || c == slow
                        ? json(2e9)
                        : json((9 + 0.1 * double((r * 7 + c * 3) % 10)) * 1e9));
    cells.push_back(std::move(row));
  }
  doc["roster"] = roster;
  doc["results"] = json::array(
      {{{"transport", 0}, {"src", 1}, {"dst", 3}, {"ok", false}, {"error", "refused"}}});
  json& m = doc["matrices"]["socket"]["throughput"];
  m["cells"] = cells;
  m["rows"] = json::array(
      {{{"rank", slow}, {"cells", n - 1}, {"min", 2e9}, {"median", 2e9}, {"max", 2e9}}});
  if (group) {
    const size_t k = (n + group - 1) / group;
    json names = json::array(), gc = json::array(), pairs = json::array();
    for (size_t a = 0; a < k; ++a) {
      names.push_back("leaf" + std::to_string(a));
      gc.push_back(json::array());
      pairs.push_back(json::array());
      for (size_t b = 0; b < k; ++b) {
        gc.back().push_back(a == 2 && b == 0 ? 5e9 : 9.4e9);
        pairs.back().push_back(group * group);
      }
    }
    m["groups"] = {{"names", names}, {"cells", gc}, {"pairs", pairs}};
  }
  return doc;
}

// The page with its data URIs' payloads cut out (the checks for "nan" read text, not base64).
std::string without_payloads(std::string page) {
  const std::string mark = "data:image/png;base64,";
  for (size_t at = page.find(mark); at != std::string::npos; at = page.find(mark, at + 1))
    page.erase(at + mark.size(), page.find('"', at) - at - mark.size());
  return page;
}
}  // namespace

TEST_CASE("a fleet page above the raster threshold: one image, framed by group, the group matrix") {
  // 300 ranks, no groups: one <image>, a pixel per pair, rank numbers on the axes.
  const std::string page = page_of(big_fleet_doc(300, 0, 17));
  check_page(without_payloads(page));
  CHECK(count(page, "<image ") == 1);
  CHECK(count(page, "data:image/png;base64,iVBORw0KGgo") == 1);  // a PNG's signature
  CHECK(count(page, "<rect") < 100);                             // the key and the histogram
  CHECK(page.find("a pixel per pair of the 300 ranks") != std::string::npos);
  CHECK(page.find("image-rendering:pixelated") != std::string::npos);
  CHECK(page.find("ordered by group") == std::string::npos);
  // 1,024 ranks in 32 groups: the page stays small, the groups named and framed, the group
  // matrix beside the raster.
  const std::string big = page_of(big_fleet_doc(1024, 32, 700));
  check_page(without_payloads(big));
  CHECK(big.size() < 10'000'000);
  CHECK(count(big, "<image ") == 1);
  // 1,024 ranks on 600 px: a pixel per 2 x 2 pairs, the worst of them, so that the slow rank's
  // line stays in the image (scaled down by the browser, it would vanish).
  CHECK(big.find("the 1024 ranks&#39; pairs, a pixel per 2 x 2 of them showing the worst") !=
        std::string::npos);
  CHECK(big.find(">leaf31</text>") != std::string::npos);
  CHECK(big.find("by group: the median") != std::string::npos);
  CHECK(big.find("ordered by group (32 groups)") != std::string::npos);
  CHECK(count(big, "<line ") >= 2 * 31);  // a line before each group but the first, both ways
  // 4 groups: the group matrix as a table too, its medians and pair counts.
  const std::string four = page_of(big_fleet_doc(400, 100, 50));
  CHECK(four.find("client group \\ server group") != std::string::npos);
  CHECK(four.find(">5.00 (10000)<") != std::string::npos);
  // At the threshold the heatmap is still a cell per pair.
  const std::string at = page_of(big_fleet_doc(256, 0, 17));
  CHECK(count(at, "<image ") == 0);
  CHECK(count(at, "<rect") > 256 * 256);
}

TEST_CASE("png: base64, and an indexed PNG's chunks with their CRCs") {
  CHECK(png::base64("") == "");
  CHECK(png::base64("Man") == "TWFu");
  CHECK(png::base64("Ma") == "TWE=");
  CHECK(png::base64("M") == "TQ==");
  const std::string p = png::indexed(2, 1, {0, 1}, {{255, 0, 0}, {0, 0, 255}});
  CHECK(p.rfind("\x89PNG\r\n\x1a\n", 0) == 0);
  CHECK(p.find("IHDR") == 12);
  CHECK(p.find("PLTE") != std::string::npos);
  CHECK(p.find("IDAT") != std::string::npos);
  // IEND's CRC is the same in every PNG: AE 42 60 82.
  CHECK(p.substr(p.size() - 12) == std::string("\0\0\0\0IEND\xae\x42\x60\x82", 12));
  CHECK(png::data_uri(p).rfind("data:image/png;base64,iVBORw0KGgo", 0) == 0);
  CHECK_THROWS(png::indexed(2, 2, {0, 1}, {{0, 0, 0}}));
}

TEST_CASE("a fleet compare above the raster threshold: one image, the pair that moved listed") {
  // 1,024 ranks, every pair unchanged but 700->3 at half: a raster of a pixel per 2 x 2 pairs
  // (the one that moved most shown), not a million cells; the moved pair in the table.
  const size_t n = 1024;
  json ratio = json::array();
  for (size_t i = 0; i < n; ++i) {
    json row = json::array();
    for (size_t j = 0; j < n; ++j)
      row.push_back(i == j ? json(nullptr) : json(i == 700 && j == 3 ? 0.5 : 1.0));
    ratio.push_back(std::move(row));
  }
  const json doc = {
      {"schema", 1},
      {"fleet_compare",
       json::array({{{"a", "a.json socket"},
                     {"b", "b.json socket"},
                     {"figure", "throughput"},
                     {"ratio", ratio},
                     {"moved", json::array({{{"src", 700}, {"dst", 3}, {"ratio", 0.5}}})},
                     {"moved_count", 1}}})}};
  const std::string page = page_of(doc);
  check_page(without_payloads(page));
  CHECK(page.size() < 2'000'000);
  CHECK(count(page, "<image ") == 1);
  CHECK(count(page, "data:image/png;base64,iVBORw0KGgo") == 1);
  CHECK(count(page, "<rect") < 20);  // the key alone
  CHECK(page.find("a pixel per 2 x 2 pairs, showing the one that moved most") != std::string::npos);
  CHECK(page.find("pairs that moved beyond 10%: 1") != std::string::npos);
  CHECK(page.find("<td class=\"n\">700</td>") != std::string::npos);
}
