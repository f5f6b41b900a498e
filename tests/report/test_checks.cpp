#include <catch2/catch.hpp>

#include "report/checks.hpp"

using namespace mtperf;

namespace {

Report stream_report() {
  Report r;
  r.spec.workload = Workload::stream;
  r.summary.window_s = 2;
  r.summary.throughput_bps = 9.5e9;
  r.summary.throughput_c2s_bps = 9.5e9;
  r.summary.udp_loss_percent = 0.25;
  r.summary.jain_fairness = 0.99;
  r.iterations.push_back(r.summary);
  return r;
}

}  // namespace

TEST_CASE("checks parse: metric, operator, value with a decimal suffix") {
  auto c = parse_checks(" throughput>=9G , loss<=0,errors==0,jain!=1,latency_p99<2.5K,verify>-1");
  REQUIRE(c.size() == 6);
  CHECK(c[0].metric == "throughput");
  CHECK(c[0].op == Check::Op::ge);
  CHECK(c[0].value == 9e9);
  CHECK(c[0].text == "throughput>=9G");
  CHECK(c[1].op == Check::Op::le);
  CHECK(c[2].op == Check::Op::eq);
  CHECK(c[3].op == Check::Op::ne);
  CHECK(c[4].op == Check::Op::lt);
  CHECK(c[4].value == 2500);
  CHECK(c[5].op == Check::Op::gt);
  CHECK(c[5].value == -1);
}

TEST_CASE("a bad check is refused, naming it") {
  CHECK_THROWS_WITH(parse_checks("throughput>=9G,througput>1"),
                    Catch::Contains("'througput>1': unknown figure 'througput'"));
  CHECK_THROWS_WITH(parse_checks("loss"), Catch::Contains("'loss': no comparison"));
  CHECK_THROWS_WITH(parse_checks("loss<=x"), Catch::Contains("'x' is not a number"));
  CHECK_THROWS_WITH(parse_checks("loss<="), Catch::Contains("no value"));
  CHECK_THROWS_WITH(parse_checks("loss<=1,,errors==0"), Catch::Contains("an empty check"));
  CHECK_THROWS_WITH(parse_checks("loss<=1e999"), Catch::Contains("is not a number"));
}

TEST_CASE("checks evaluate against the summary; a figure the run lacks fails") {
  Report r = stream_report();
  auto res = evaluate_checks(
      parse_checks("throughput>=9G,throughput>=10G,loss<=0.5,loss<=0,latency_p99<=100,verify==0"),
      r);
  REQUIRE(res.size() == 6);
  CHECK(res[0].passed);
  CHECK(res[0].detail == "measured 9.5G");
  CHECK_FALSE(res[1].passed);
  CHECK(res[2].passed);
  CHECK_FALSE(res[3].passed);
  CHECK_FALSE(res[4].passed);
  CHECK_FALSE(res[4].measured);
  CHECK_THAT(res[4].detail, Catch::Contains("no latency"));
  CHECK_FALSE(res[5].passed);
  CHECK_THAT(res[5].detail, Catch::Contains("--verify"));
  CHECK_FALSE(all_passed(res));

  r.summary.verify.emplace();
  r.summary.verify->bad_receives = 2;
  r.summary.errors = {"flow 0: receive: Connection reset by peer"};
  res = evaluate_checks(parse_checks("verify==0,verify<=2,errors==0"), r);
  CHECK_FALSE(res[0].passed);
  CHECK(res[1].passed);
  CHECK_FALSE(res[2].passed);
  CHECK(*res[2].measured == 1);
}

TEST_CASE("JUnit XML: one testcase per check, failures counted and escaped") {
  Report r = stream_report();
  auto res = evaluate_checks(parse_checks("throughput>=9G,loss<0.1"), r);
  std::string xml = checks_junit(r, res);
  CHECK_THAT(xml, Catch::StartsWith("<?xml version=\"1.0\""));
  CHECK_THAT(xml, Catch::Contains("<testsuites tests=\"2\" failures=\"1\">"));
  CHECK_THAT(xml, Catch::Contains("name=\"throughput&gt;=9G\""));
  CHECK_THAT(xml, Catch::Contains("name=\"loss&lt;0.1\""));
  CHECK_THAT(xml, Catch::Contains("<failure message=\"measured 0.25\">loss&lt;0.1: measured 0.25"));
  CHECK_THAT(checks_text(res), Catch::Contains("verdict            FAIL"));
  auto j = checks_json(res);
  REQUIRE(j.size() == 2);
  CHECK(j[0]["passed"] == true);
  CHECK(j[1]["measured"] == 0.25);
}

TEST_CASE("interval checks: only the figures an interval has, from the client's counts") {
  auto checks = parse_checks(
      "throughput>=9G,throughput_c2s>=1G,transaction_rate>0,errors==0,"
      "loss<=0,verify==0,latency_p99<100,longest_stall<0.5");
  CHECK(judged_per_interval(checks[0]));
  CHECK(judged_per_interval(checks[3]));
  CHECK_FALSE(judged_per_interval(checks[4]));  // loss, verify, latency: at the end only
  CHECK_FALSE(judged_per_interval(checks[7]));
  IntervalSample s;
  s.start_s = 2;
  s.end_s = 2.5;
  s.sum.bytes_sent = 500'000'000;  // 8 Gbit/s over half a second
  s.sum.bytes_recv = 62'500'000;   // 1 Gbit/s
  s.sum.errors = 1;
  auto res = evaluate_interval_checks(checks, s);
  REQUIRE(res.size() == 4);
  CHECK(res[0].check.text == "throughput>=9G");
  CHECK(*res[0].measured == Approx(9e9));
  CHECK(res[0].passed);
  CHECK(*res[1].measured == Approx(8e9));
  CHECK(res[1].passed);
  CHECK(*res[2].measured == 0);  // a stream has no transactions
  CHECK_FALSE(res[2].passed);
  CHECK(*res[3].measured == 1);  // errors counted in the interval, not a rate
  CHECK_FALSE(res[3].passed);
  CHECK(interval_checks_text(res) ==
        " throughput>=9G ok throughput_c2s>=1G ok transaction_rate>0 FAIL (measured 0)"
        " errors==0 FAIL (measured 1)");
  IntervalSample empty;  // a zero-length interval measures nothing, and no division by 0
  auto none = evaluate_interval_checks(checks, empty);
  CHECK(*none[0].measured == 0);
}

TEST_CASE("longest_stall is a check on the whole run") {
  Report r = stream_report();
  r.summary.longest_stall_s = 0.8;
  auto res = evaluate_checks(parse_checks("longest_stall<=0.5"), r);
  CHECK_FALSE(res[0].passed);
  CHECK(res[0].detail == "measured 0.8");
}

TEST_CASE("flows_not_connected is a check on the whole run") {
  Report r = stream_report();
  CHECK(evaluate_checks(parse_checks("flows_not_connected==0"), r)[0].passed);
  r.summary.flows_not_connected = {{17, "connect to 127.0.0.1:40001: Connection refused"}};
  auto res = evaluate_checks(parse_checks("flows_not_connected==0"), r);
  CHECK_FALSE(res[0].passed);
  CHECK(res[0].detail == "measured 1");
}

TEST_CASE("one grammar: run and fleet checks parse numbers, operators and references alike",
          "[checks]") {
  constexpr std::string_view refs[] = {"max", "min", "median"};
  auto t = parse_check_terms("pair.throughput >= 0.93*max, x<2.5K,y!=-1", refs);
  REQUIRE(t.size() == 3);
  CHECK((t[0].subject == "pair.throughput" && t[0].op == CheckOp::ge && t[0].ref == "max"));
  CHECK(t[0].value == Approx(0.93));
  CHECK((t[1].op == CheckOp::lt && t[1].value == 2500 && t[1].ref.empty()));
  CHECK((t[2].op == CheckOp::ne && t[2].value == -1));
  CHECK(parse_check_terms("a<=median", refs)[0].value == 1);
  CHECK_THROWS_WITH(parse_check_terms("a<=2*max"), Catch::Contains("F*REF takes no reference"));
  CHECK_THROWS_WITH(parse_check_terms("a<=2*best", refs),
                    Catch::Contains("F*REF takes max, min or median"));
  CHECK_THROWS_WITH(parse_check_terms("a<=1,"), Catch::Contains("an empty check"));
  CHECK_THROWS_WITH(parse_check_terms("a<=9Q"), Catch::Contains("'9Q' is not a number"));
  // The same bound reads the same in both commands' checks.
  CHECK(parse_checks("throughput>=9G")[0].value == parse_check_terms("x>=9g")[0].value);
  CHECK(check_holds(1, CheckOp::le, 1));
  CHECK_FALSE(check_holds(2, CheckOp::le, 1));
  CHECK(failing(CheckOp::ge) == "<");
}
