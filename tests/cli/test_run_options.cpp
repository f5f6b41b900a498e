// `mtperf run` options: every value is checked before anything is set up, and a bad one names
// the option.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cli/commands.hpp"
#include "cli/run_options.hpp"
#include "transports/api/registry.hpp"

using namespace mtperf;
using namespace mtperf::cli;

namespace {

RunOptions parse(std::vector<std::string> args) {
  return parse_run_options(args);
}

}  // namespace

TEST_CASE("sizes take binary suffixes", "[options]") {
  CHECK(parse_size("m", "0") == 0);
  CHECK(parse_size("m", "1500") == 1500);
  CHECK(parse_size("m", "64K") == 65536);
  CHECK(parse_size("m", "64k") == 65536);
  CHECK(parse_size("m", "1M") == 1048576);
  CHECK(parse_size("m", "2G") == 2147483648ull);
  CHECK(parse_size("m", "0.5K") == 512);
}

TEST_CASE("a bad size names the option", "[options]") {
  CHECK_THROWS_AS(parse_size("message-size", "64Q"), UsageError);
  CHECK_THROWS_WITH(parse_size("message-size", "64Q"), Catch::Contains("--message-size"));
  CHECK_THROWS_WITH(parse_size("message-size", "big"), Catch::Contains("--message-size"));
  CHECK_THROWS_WITH(parse_size("message-size", "-1"), Catch::Contains("--message-size"));
  CHECK_THROWS_WITH(parse_size("message-size", "1.5"), Catch::Contains("whole number"));
  CHECK_THROWS_AS(parse_size("message-size", ""), UsageError);
  CHECK_THROWS_AS(parse_size("message-size", "nan"), UsageError);
}

TEST_CASE("rates take decimal suffixes in bits/s", "[options]") {
  CHECK(parse_rate("rate", "1000") == 1000);
  CHECK(parse_rate("rate", "10k") == 1e4);
  CHECK(parse_rate("rate", "100M") == 1e8);
  CHECK(parse_rate("rate", "2.5G") == 2.5e9);
  CHECK_THROWS_WITH(parse_rate("rate", "100Mbps"), Catch::Contains("--rate"));
  CHECK_THROWS_WITH(parse_rate("rate", "fast"), Catch::Contains("--rate"));
  CHECK_THROWS_WITH(parse_rate("rate", "inf"), Catch::Contains("--rate"));
}

TEST_CASE("the defaults", "[options]") {
  RunOptions o = parse({});
  CHECK(o.embedded);
  CHECK(o.format == Format::text);
  CHECK(o.spec.workload == Workload::stream);
  CHECK(o.spec.proto == Proto::tcp);
  CHECK(o.spec.duration_s == 10);
  CHECK(o.spec.req_size == 1);
  CHECK(o.spec.resp_size == 1);
  CHECK(o.rule.max_iterations == 1);
  CHECK(o.rule.min_iterations == 1);
}

TEST_CASE("a full command line", "[options]") {
  RunOptions o =
      parse({"-w", "rr", "-p", "udp", "-r", "1024,2048", "-l", "3", "--warmup", "0.2", "-P", "4",
             "--format", "json", "-H", "127.0.0.1:5000", "--burst", "8", "-q"});
  CHECK(o.spec.workload == Workload::rr);
  CHECK(o.spec.proto == Proto::udp);
  CHECK(o.spec.req_size == 1024);
  CHECK(o.spec.resp_size == 2048);
  CHECK(o.spec.duration_s == 3);
  CHECK(o.spec.warmup_s == 0.2);
  CHECK(o.spec.flows == 4);
  CHECK(o.spec.burst == 8);
  CHECK(o.format == Format::json);
  CHECK_FALSE(o.embedded);
  CHECK(o.client.server == "127.0.0.1:5000");
  CHECK(o.quiet);
}

TEST_CASE("-r with one size uses it both ways; sizes take suffixes", "[options]") {
  RunOptions o = parse({"-w", "rr", "-r", "64"});
  CHECK(o.spec.req_size == 64);
  CHECK(o.spec.resp_size == 64);
  o = parse({"-w", "rr", "-r", "1K,4K"});
  CHECK(o.spec.req_size == 1024);
  CHECK(o.spec.resp_size == 4096);
  CHECK_THROWS_WITH(parse({"-r", "1,2,3"}), Catch::Contains("--rr-size"));
}

TEST_CASE("stream sizes and rates", "[options]") {
  RunOptions o = parse({"-p", "udp", "--rate", "100M", "-m", "1400"});
  CHECK(o.spec.rate_bps == 1e8);
  CHECK(o.spec.msg_size == 1400);
  o = parse({"--sndbuf", "4M", "--rcvbuf", "256K"});
  CHECK(o.spec.sock.sndbuf == 4 << 20);
  CHECK(o.spec.sock.rcvbuf == 256 << 10);
}

TEST_CASE("a bad value names the option", "[options]") {
  CHECK_THROWS_AS(parse({"-w", "flood"}), UsageError);
  // As typed (docs/cli.md, Exit status): "-w", "--workload".
  CHECK_THROWS_WITH(parse({"-w", "flood"}),
                    Catch::StartsWith("option -w:") && Catch::Contains("flood"));
  CHECK_THROWS_WITH(parse({"--workload", "flood"}), Catch::StartsWith("option --workload:"));
  CHECK_THROWS_WITH(parse({"-p", "sctp"}), Catch::StartsWith("option -p:"));
  CHECK_THROWS_WITH(parse({"--wait", "nap"}), Catch::Contains("--wait"));
  CHECK_THROWS_WITH(parse({"--format", "xml"}), Catch::Contains("--format"));
  CHECK_THROWS_WITH(parse({"--rate", "lots"}), Catch::Contains("--rate"));
  CHECK_THROWS_WITH(parse({"-m", "12X"}), Catch::Contains("--message-size"));
  CHECK_THROWS_WITH(parse({"-O", "novalue"}), Catch::Contains("-O"));
  CHECK_THROWS_AS(parse({"-l", "soon"}), UsageError);
}

TEST_CASE("a test the server would refuse is refused here first", "[options]") {
  CHECK_THROWS_WITH(parse({"-P", "0"}), Catch::Contains("flows"));
  CHECK_THROWS_WITH(parse({"-P", "100001"}), Catch::Contains("flows"));
  CHECK_THROWS_WITH(parse({"-w", "crr", "-p", "udp"}), Catch::Contains("crr"));
  CHECK_THROWS_WITH(parse({"-w", "rr", "-p", "udp", "-r", "8,8"}), Catch::Contains("size"));
  CHECK_THROWS_WITH(parse({"-l", "0"}), Catch::Contains("-l/--length"));
  CHECK_THROWS_WITH(parse({"--burst", "0"}), Catch::Contains("burst"));
  CHECK_THROWS_AS(parse({"-P", "0"}), UsageError);
}

TEST_CASE("CPU lists keep their order and must be online here", "[options]") {
  CHECK(parse({"--cpus", "0", "--server-cpus", "0,0"}).spec.server_cpus == std::vector<int>{0, 0});
  CHECK_THROWS_WITH(parse({"--cpus", "100000"}), Catch::Contains("option --cpus"));
  CHECK_THROWS_WITH(parse({"--cpus", "1000"}),
                    Catch::Contains("option --cpus: CPU 1000 is not online here (online: "));
  CHECK_THROWS_WITH(parse({"--server-cpus", "1000"}),
                    Catch::Contains("option --server-cpus: CPU 1000 is not online here"));
  // A remote server's CPUs are its own: checked there.
  CHECK(parse({"-H", "far", "--server-cpus", "1000,0"}).spec.server_cpus ==
        std::vector<int>{1000, 0});
}

TEST_CASE("errors name the option as typed, with the value as typed", "[options]") {
  CHECK_THROWS_WITH(parse({"-l", "-1"}), "option -l/--length: -1 s is outside 0.05..3600 s");
  CHECK_THROWS_WITH(parse({"--threads", "-1"}), "option --threads: -1 is outside 0..256");
  CHECK_THROWS_WITH(parse({"-P", "-2"}), "option -P/--flows: -2 is outside 1..100000");
  // The bound is the one validate() holds the test to, named by the option typed.
  CHECK_THROWS_WITH(parse({"-P", "100001"}), "option -P/--flows: 100001 is outside 1..100000");
  CHECK_NOTHROW(parse({"-P", "4000"}));
  CHECK_NOTHROW(parse({"-P", "100000", "-w", "bidir"}));
  CHECK_THROWS_WITH(parse({"--warmup", "-1"}), Catch::Contains("option --warmup: -1 s"));
  CHECK_THROWS_WITH(parse({"-m", "0"}), Catch::Contains("option -m/--message-size: 0 bytes"));
}

TEST_CASE("-i MAX,MIN and -I LEVEL,WIDTH", "[options]") {
  RunOptions o = parse({"-i", "5,3", "-I", "95,5"});
  CHECK(o.rule.max_iterations == 5);
  CHECK(o.rule.min_iterations == 3);
  CHECK(o.rule.level == Approx(0.95));
  CHECK(o.rule.width_percent == 5);
  o = parse({"-i", "4", "-I", "99,10"});
  CHECK(o.rule.max_iterations == 4);
  CHECK(o.rule.min_iterations == 4);
  CHECK(o.rule.level == Approx(0.99));
  CHECK(o.rule.width_percent == 10);
}

TEST_CASE("-i with MIN above MAX and other bad rules are refused", "[options]") {
  CHECK_THROWS_AS(parse({"-i", "3,5"}), UsageError);
  CHECK_THROWS_WITH(parse({"-i", "3,5"}), Catch::Contains("-i"));
  CHECK_THROWS_WITH(parse({"-i", "0"}), Catch::Contains("-i"));
  CHECK_THROWS_WITH(parse({"-i", "2.5"}), Catch::Contains("-i"));
  CHECK_THROWS_WITH(parse({"-i", "1000"}), Catch::Contains("-i"));
  CHECK_THROWS_WITH(parse({"-I", "120,5"}), Catch::Contains("-I"));
  CHECK_THROWS_WITH(parse({"-I", "95,0"}), Catch::Contains("-I"));
  CHECK_THROWS_AS(parse({"-I", "95,5,1"}), UsageError);
}

TEST_CASE("an unknown option is refused", "[options]") {
  CHECK_THROWS_AS(parse({"--turbo"}), UsageError);
  CHECK_THROWS_WITH(parse({"--turbo"}), Catch::Contains("turbo"));
  CHECK_THROWS_AS(parse({"-Z"}), UsageError);
  CHECK_THROWS_AS(parse({"stray"}), UsageError);
  CHECK_THROWS_AS(parse({"-l"}), UsageError);  // a value is missing
}

TEST_CASE("--help stops parsing", "[options]") {
  CHECK(parse({"--help"}).help);
  CHECK_THAT(run_usage(), Catch::Contains("--workload"));
}

TEST_CASE("TCP_NODELAY: on, except for streams of small sends, unless given", "[options]") {
  CHECK(parse({"-w", "stream"}).spec.sock.nodelay);
  CHECK(parse({"-w", "bidir", "-m", "16K"}).spec.sock.nodelay);
  CHECK_FALSE(parse({"-w", "stream", "-m", "8K"}).spec.sock.nodelay);
  CHECK_FALSE(parse({"-w", "maerts", "-m", "1K"}).spec.sock.nodelay);
  CHECK(parse({"-w", "rr", "-r", "1K,1K"}).spec.sock.nodelay);
  CHECK(parse({"-w", "crr"}).spec.sock.nodelay);
  CHECK(parse({"-w", "stream", "-m", "8K", "--no-delay", "true"}).spec.sock.nodelay);
  CHECK_FALSE(parse({"-w", "rr", "--no-delay", "false"}).spec.sock.nodelay);
}

TEST_CASE("--adapters makes -P count flows per adapter", "[options][placement]") {
  auto o = parse({"--adapters", "auto:3", "-P", "2", "--per-controller", "1"});
  REQUIRE(o.placement);
  CHECK(o.placement->auto_count == 3);
  CHECK(o.placement->flows_per_adapter == 2);
  CHECK(o.placement->per_controller == 1);
  CHECK(o.placement->bind == BindMode::irq);
  CHECK(o.spec.flows == 6);
  auto listed = parse({"--adapters", "eth0,eth1", "--pin", "0-1", "--cpus", "1"});
  CHECK(listed.placement->adapters == std::vector<std::string>{"eth0", "eth1"});
  CHECK(listed.placement->bind == BindMode::cpus);
  CHECK(listed.placement->bind_cpus == std::vector<int>{0, 1});
  CHECK(listed.placement->fallback_cpus == std::vector<int>{1});
  CHECK(listed.spec.flows == 2);
  // --bind, the old spelling of --pin, is still read.
  CHECK(parse({"--adapters", "eth0", "--bind", "1"}).placement->bind_cpus == std::vector<int>{1});
  CHECK_THROWS_WITH(parse({"--adapters", "eth0", "--bind", "1", "--pin", "0"}),
                    Catch::Contains("option --bind is given more than once"));
  CHECK_FALSE(parse({}).placement);
}

TEST_CASE("placement options are checked and need --adapters", "[options][placement]") {
  CHECK_THROWS_WITH(parse({"--adapters", "auto:0"}), Catch::Contains("--adapters"));
  CHECK_THROWS_WITH(parse({"--adapters", "auto:2", "--bind", "sometimes"}),
                    Catch::Contains("option --bind: 'sometimes' is not irq"));
  CHECK_THROWS_WITH(parse({"--adapters", "auto:2", "--pin", "sometimes"}),
                    Catch::Contains("option --pin: 'sometimes' is not irq"));
  CHECK_THROWS_WITH(parse({"--bind", "irq"}), Catch::Contains("option --bind needs --adapters"));
  CHECK_THROWS_WITH(parse({"--pin", "irq"}), Catch::Contains("option --pin needs --adapters"));
  CHECK_THROWS_WITH(parse({"--adapters", "auto:2", "--per-controller", "-1"}),
                    Catch::Contains("--per-controller"));
  CHECK_THROWS_WITH(parse({"--testbed", "-H", "10.0.0.2"}), Catch::Contains("drop -H"));
  CHECK(parse({"--testbed"}).testbed == std::string("default"));
  CHECK(parse({"--testbed=lab"}).testbed == std::string("lab"));
}

TEST_CASE("--server-cpus travels in the test and is checked", "[options]") {
  auto o = parse({"-H", "far", "--server-cpus", "1,3-4"});  // the far host's CPUs
  CHECK(o.spec.server_cpus == std::vector<int>{1, 3, 4});
  CHECK_THROWS_WITH(parse({"--server-cpus", "x"}), Catch::Contains("--server-cpus"));
  CHECK_THROWS_WITH(parse({"--server-cpus", "5000"}), Catch::Contains("--server-cpus"));
  CHECK(parse({}).spec.server_cpus.empty());
}

TEST_CASE("--stop-on-error and --check go into the request", "[options]") {
  CHECK_FALSE(parse({}).spec.stop_on_error);
  RunOptions o = parse({"--stop-on-error", "--interval", "1", "--check", "throughput>=1G"});
  CHECK(o.spec.stop_on_error);
  REQUIRE(o.checks.size() == 1);
  CHECK(o.checks[0].metric == "throughput");
}

TEST_CASE("--need-all goes into the client's options", "[options]") {
  CHECK_FALSE(parse({}).client.need_all);
  CHECK(parse({"--need-all"}).client.need_all);
  CHECK(parse({"--check", "flows_not_connected==0"}).checks[0].metric == "flows_not_connected");
}

TEST_CASE("a key on the command line is refused, saying how to give one", "[options][key]") {
  // argv shows in ps and /proc/PID/cmdline: run, serve and fleet take a key from a file or the
  // environment only, and name --key when it is given.
  // (Catch's combined matchers hold their parts by reference: one expression each.)
  CHECK_THROWS_WITH(parse({"-H", "far-host", "--key", "secret"}),
                    Catch::Contains("option --key:") && Catch::Contains("--key-file FILE") &&
                        Catch::Contains("MTPERF_KEY"));
  CHECK_THROWS_WITH(parse({"--key=secret"}), Catch::Contains("option --key:"));
  CHECK(serve_command({"--key", "secret"}) == 2);
  CHECK(fleet_command({"--key", "secret", "--insecure"}) == 2);
  CHECK(run_command({"--key", "secret"}) == 2);
}

// --peer perftest: the transport that speaks it runs the test itself; everything it cannot do is
// refused before anything connects, naming what it can do.
TEST_CASE("--peer perftest and --count are checked before anything connects", "[options][peer]") {
  CHECK_THROWS_WITH(parse({"--count", "10", "-H", "h"}), Catch::Contains("option --count: only"));
  CHECK_THROWS_WITH(parse({"--peer", "iperf3", "--count", "10", "-H", "h"}),
                    Catch::Contains("option --count: only"));
  CHECK_THROWS_WITH(parse({"--peer", "sockperf", "--get-server-output", "-H", "h"}),
                    Catch::Contains("option --get-server-output: only with --peer iperf3"));
  CHECK_NOTHROW(parse({"--peer", "iperf3", "--get-server-output", "-H", "h"}));
  CHECK_THROWS_WITH(parse({"--get-server-output", "-H", "h"}),
                    Catch::Contains("option --get-server-output: only with --peer iperf3"));
  CHECK_THROWS_WITH(parse({"--peer", "perftest", "--count", "0", "-H", "h"}),
                    Catch::Contains("option --count: expected 1"));
  bool rdma = false;  // compiled in wherever rdma-core's headers are (CI's builds)
  for (const TransportEntry& e : transports())
    rdma = rdma || e.foreign != nullptr;
  if (!rdma) {
    WARN("no transport here speaks perftest: the rest is not checked");
    return;
  }
  CHECK_THROWS_WITH(parse({"--peer", "perftest", "-H", "h"}),
                    Catch::Contains("perftest's servers are spoken to by -T rdma"));
  const std::vector<std::string> base = {"--peer", "perftest", "-T", "rdma", "-H", "h"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> a = base;
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  CHECK_NOTHROW(parse(with({"-w", "stream", "-O", "verb=write", "--count", "5"})));
  CHECK_NOTHROW(parse(with({"-w", "maerts", "-O", "verb=read"})));
  CHECK_NOTHROW(parse(with({"-w", "rr", "-r", "64"})));
  CHECK_THROWS_WITH(parse(with({"-w", "crr"})), Catch::Contains("workload crr has no program"));
  CHECK_THROWS_WITH(parse(with({"-w", "bidir"})), Catch::Contains("workload bidir"));
  CHECK_THROWS_WITH(parse(with({"-O", "verb=read"})), Catch::Contains("-w maerts -O verb=read"));
  CHECK_THROWS_WITH(parse(with({"-w", "maerts"})), Catch::Contains("-w stream"));
  CHECK_THROWS_WITH(parse(with({"-O", "verb=write_imm"})), Catch::Contains("no program for it"));
  CHECK_THROWS_WITH(parse(with({"-w", "rr", "-O", "verb=read"})),
                    Catch::Contains("ib_send_lat (verb=send) or ib_write_lat"));
  CHECK_THROWS_WITH(parse(with({"-O", "srq=on"})), Catch::Contains("option -O srq: not read"));
  CHECK_THROWS_WITH(parse(with({"-O", "connect=cm"})), Catch::Contains("connect=oob"));
  CHECK_THROWS_WITH(parse(with({"-P", "2"})), Catch::Contains("one flow (-P 1)"));
  CHECK_THROWS_WITH(parse(with({"-w", "rr", "-r", "64,128"})), Catch::Contains("one size both"));
  CHECK_THROWS_WITH(parse(with({"-i", "3"})), Catch::Contains("(-i 1)"));
  CHECK_THROWS_WITH(parse(with({"--count", "2000000000"})),
                    Catch::Contains("outside 1..1,000,000,000"));
}
