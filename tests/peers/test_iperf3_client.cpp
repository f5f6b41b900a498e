// `mtperf run --peer iperf3` against the real iperf3 server (Debian 12: 3.12) on 127.0.0.1: every
// workload it claims, the two sides' byte counts compared, the refusals, a busy server.
#include <nlohmann/json.hpp>

#include <chrono>

#include <catch2/catch.hpp>

#include "peers/iperf3/client.hpp"
#include "tests/peers/iperf3_server.hpp"
#include "tests/support/command.hpp"
#include "tests/support/skip.hpp"

using mtperf::test::Iperf3Server;
using mtperf::test::mtperf_cmd;

MTPERF_TEST_REQUIRES(mtperf::test::why_no_iperf3());

namespace {

nlohmann::json run_json(const Iperf3Server& s, const std::string& args) {
  auto r = mtperf_cmd("run --peer iperf3 -H " + s.address() + " --format json " + args);
  REQUIRE(r.rc == 0);
  return nlohmann::json::parse(r.out);
}

// Without a warm-up both sides count the whole test, and the counts are equal (harness/
// peer_run.cpp says why): what iperf3 sent this side reads to the end; what this side sent
// iperf3 counts until TEST_END, which goes only after every byte was acknowledged.
void check_equal(const nlohmann::json& doc, size_t streams) {
  const auto& p = doc.at("peer");
  CHECK(p.at("peer") == "iperf3");
  REQUIRE(p.at("streams").size() == streams);
  for (const auto& s : p.at("streams")) {
    INFO(s.dump());
    CHECK(s.at("bytes_here").get<uint64_t>() > 0);
    CHECK(s.at("bytes_here") == s.at("bytes_peer"));
    CHECK(s.at("agree") == true);
  }
  CHECK(p.at("agree") == true);
  CHECK(doc.at("summary").at("errors").empty());
}

}  // namespace

TEST_CASE("stream against iperf3 -s: the bytes sent are the bytes iperf3 received") {
  Iperf3Server s;
  auto doc = run_json(s, "-w stream -l 0.5");
  check_equal(doc, 1);
  const auto& f = doc.at("summary").at("flows").at(0);
  CHECK(f.at("server_bytes_received") == doc["peer"]["streams"][0]["bytes_peer"]);
  CHECK(doc.at("summary").at("throughput_bps").get<double>() > 0);
}

TEST_CASE("maerts (-R) with 2 flows: iperf3's bytes sent are the bytes received here") {
  Iperf3Server s;
  check_equal(run_json(s, "-w maerts -P 2 -l 0.5"), 2);
}

TEST_CASE("bidir with 2 flows each way: four streams, each agreeing") {
  Iperf3Server s;
  auto doc = run_json(s, "-w bidir -P 2 -l 0.5");
  check_equal(doc, 4);
  const auto& st = doc["peer"]["streams"];
  CHECK(st[0]["direction"] == "c2s");
  CHECK(st[2]["direction"] == "s2c");
  CHECK(st[2]["peer_id"] == 4);  // iperf3 numbers its streams 1, 3, 4, 5
}

TEST_CASE("the options iperf3 carries: -m, buffers, congestion control, nodelay") {
  Iperf3Server s;
  auto doc = run_json(s,
                      "-w stream -l 0.3 -m 8K --sndbuf 512K --rcvbuf 512K --cc reno "
                      "--no-delay true");
  check_equal(doc, 1);
  CHECK(doc["peer"]["congestion"] == "reno");
}

TEST_CASE("--get-server-output: iperf3's own report of the same test, in JSON and text") {
  {
    Iperf3Server s;
    auto doc = run_json(s, "-w stream -l 0.3 --get-server-output");
    check_equal(doc, 1);
    const std::string out = doc["peer"].value("server_output", "");
    INFO(out);
    CHECK(out.find("receiver") != std::string::npos);  // its summary line of the stream
  }
  {
    Iperf3Server s;  // one server a test: iperf3 -s takes the next only once it is done
    auto text =
        mtperf_cmd("run --peer iperf3 -H " + s.address() + " -w stream -l 0.3 --get-server-output");
    REQUIRE(text.rc == 0);
    CHECK(text.out.find("iperf3's own report (--get-server-output):") != std::string::npos);
  }
  Iperf3Server s;
  CHECK_FALSE(run_json(s, "-w stream -l 0.3")["peer"].contains("server_output"));
}

TEST_CASE("a warm-up is iperf3's omit: both windows' counts shown, not compared") {
  // The two windows are timed by two clocks from two starts: what crossed between them is on one
  // side only, and grows with a slow host. The run must not fail on it, and say so.
  Iperf3Server s;
  auto doc = run_json(s, "-w stream -l 0.5 --warmup 1");
  CHECK_THAT(doc["peer"]["margin"].get<std::string>(), Catch::Contains("not compared"));
  for (const auto& st : doc["peer"]["streams"]) {
    INFO(st.dump());
    CHECK(st["agree"] == true);
    CHECK(st["bytes_here"].get<uint64_t>() > 0);
    CHECK(st["bytes_peer"].get<uint64_t>() > 0);
  }
}

namespace {

// A UDP stream (iperf3 -u): every datagram is -m bytes, and iperf3's receiver reports the
// highest sequence it saw (packets) and the gaps below it (errors). What this side sent is what
// iperf3 received plus its lost plus the tail after its highest sequence, whole datagrams; its
// bytes are exactly its datagrams taken times the size; its highest sequence is at most what was
// sent (a wrong counter width would make it 0: the server reads another field as the sequence).
// Loss is a figure of the network, not a disagreement: on a loaded host the server may drop a
// few datagrams, and the test holds them to the identity, not to zero.
void check_c2s(const nlohmann::json& s, uint64_t size) {
  const auto& u = s.at("udp");
  const uint64_t sent = u.at("datagrams_sent"), highest = u.at("peer_packets"),
                 lost = u.at("peer_lost"), received = u.at("peer_received"), tail = u.at("tail");
  WARN("sent " << sent << " datagrams; iperf3 received " << received << ", lost " << lost
               << ", highest sequence " << highest << ", tail " << tail << ", jitter "
               << u.at("peer_jitter_ms").get<double>() << " ms");
  CHECK(sent > 0);
  CHECK(highest > 0);
  CHECK(highest <= sent);
  CHECK(received == highest - lost);
  CHECK(sent == received + lost + tail);
  CHECK(s.at("bytes_here").get<uint64_t>() == sent * size);
  CHECK(s.at("bytes_peer").get<uint64_t>() == received * size);
  CHECK(s.at("margin_bytes").get<uint64_t>() == (lost + tail) * size);
}

// iperf3 sent (-R, the reverse half of --bidir): its datagrams sent, as its results say, beside
// this side's receiver. Out of order and loss are the network's figures: not held to zero.
void check_s2c(const nlohmann::json& s, uint64_t size) {
  const auto& u = s.at("udp");
  const uint64_t sent = u.at("peer_datagrams_sent"), highest = u.at("packets"), lost = u.at("lost"),
                 received = u.at("received"), tail = u.at("tail"), late = u.at("out_of_order");
  WARN("iperf3 sent " << sent << " datagrams; received here " << received << ", lost " << lost
                      << ", highest sequence " << highest << ", tail " << tail << ", " << late
                      << " out of order, jitter " << u.at("jitter_ms").get<double>() << " ms");
  CHECK(sent > 0);
  CHECK(highest > 0);
  CHECK(highest <= sent);
  CHECK(received == highest - lost);
  CHECK(sent == received + lost + tail);
  CHECK(late <= received);
  CHECK(u.at("jitter_ms").get<double>() >= 0);
  CHECK(s.at("bytes_here").get<uint64_t>() == received * size);
  CHECK(s.at("bytes_peer").get<uint64_t>() == sent * size);
  CHECK(s.at("margin_bytes").get<uint64_t>() == (lost + tail) * size);
}

void check_udp(const nlohmann::json& doc, size_t streams, uint64_t size) {
  const auto& p = doc.at("peer");
  REQUIRE(p.at("streams").size() == streams);
  for (const auto& s : p.at("streams")) {
    INFO(s.dump());
    if (s.at("direction") == "c2s")
      check_c2s(s, size);
    else
      check_s2c(s, size);
    CHECK(s.at("agree") == true);
  }
  CHECK(p.at("agree") == true);
  CHECK(doc.at("summary").at("errors").empty());
}

}  // namespace

TEST_CASE("UDP stream against iperf3 -s: datagrams sent = received + lost + tail, paced") {
  Iperf3Server s;
  const double rate = 20e6;
  const auto t0 = std::chrono::steady_clock::now();
  auto doc = run_json(s, "-w stream -p udp --rate 20M -m 1200 -l 1");
  const double ran_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  check_udp(doc, 1, 1200);
  // The pacer never runs ahead of its schedule by more than its 10 ms catch-up credit (and one
  // datagram); on a loaded host it may fall behind, never ahead. The flows send from before the
  // window's clock starts to after it stops (its edges read /proc), so the bound is the whole
  // command's time, which holds every send.
  const double sent_bits = doc["peer"]["streams"][0]["bytes_here"].get<double>() * 8;
  CHECK(sent_bits <= rate * (ran_s + 0.010) + 1200 * 8);
  CHECK(sent_bits > 0);
}

TEST_CASE("UDP with 2 streams: each stream's counts hold on its own") {
  Iperf3Server s;
  check_udp(run_json(s, "-w stream -p udp -P 2 --rate 20M -m 512 -l 0.5"), 2, 512);
}

TEST_CASE("UDP maerts (-u -R): iperf3's datagrams sent = received here + lost + tail, paced") {
  // The server paces at -b, each stream's share of --rate (iperf3's throttle: it sends while its
  // average since the start is under the rate). This side reads after TEST_END until no datagram
  // has come for 20 ms, so the tail is only what was dropped at the end.
  Iperf3Server s;
  const double rate = 20e6;
  const auto t0 = std::chrono::steady_clock::now();
  auto doc = run_json(s, "-w maerts -p udp --rate 20M -m 1200 -l 1");
  const double ran_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  check_udp(doc, 1, 1200);
  const auto& st = doc["peer"]["streams"][0];
  CHECK(st["direction"] == "s2c");
  // Paced: never more than the rate over the whole command's time, and one burst of datagrams
  // (iperf3 sends a few at a time when it is behind).
  const double sent_bits = st["bytes_peer"].get<double>() * 8;
  CHECK(sent_bits <= rate * ran_s + 100 * 1200 * 8);
  // This side's report carries the receiver's loss like mtperf's own UDP streams.
  CHECK(doc["summary"]["throughput_s2c_bps"].get<double>() > 0);
}

TEST_CASE("UDP maerts with 2 streams and bidir: each stream's counts hold on its own") {
  {
    Iperf3Server s;
    check_udp(run_json(s, "-w maerts -p udp -P 2 --rate 20M -m 512 -l 0.5"), 2, 512);
  }
  Iperf3Server s;
  auto doc = run_json(s, "-w bidir -p udp -P 2 --rate 20M -m 1000 -l 0.5");
  check_udp(doc, 4, 1000);
  const auto& st = doc["peer"]["streams"];
  CHECK(st[0]["direction"] == "c2s");
  CHECK(st[1]["direction"] == "c2s");
  CHECK(st[2]["direction"] == "s2c");
  CHECK(st[3]["direction"] == "s2c");
}

TEST_CASE("UDP with 64-bit counters (udp_counters_64bit): iperf3 reads the same sequence") {
  mtperf::TestSpec spec;
  spec.workload = mtperf::Workload::stream;
  spec.proto = mtperf::Proto::udp;
  spec.duration_s = 0.5;
  spec.warmup_s = 0;
  spec.rate_bps = 10e6;
  spec.msg_size = 1000;
  mtperf::control::ClientOptions opts;
  for (bool wide : {true, false}) {
    INFO("64-bit counters: " << wide);
    mtperf::iperf3::ClientSettings settings;
    settings.udp_counters_64bit = wide;
    Iperf3Server server;
    opts.server = server.address();
    auto out = mtperf::iperf3::run_test(spec, opts, settings);
    CHECK(out.params.udp_counters_64bit == wide);
    REQUIRE(out.server.streams.size() == 1);
    const auto& st = out.server.streams[0];
    const uint64_t sent = out.test.client.flows.at(0).total.msgs_sent;
    CHECK(sent > 0);
    // A width the server read otherwise would put another field where the sequence is.
    CHECK(uint64_t(st.packets) <= sent);
    CHECK(st.packets > 0);
    CHECK(st.bytes == uint64_t(st.packets - st.errors) * 1000);
  }
  // The other way: this side reads iperf3's sequence at the width it asked for (another width
  // would read the stamp or padding as the sequence: far above what was sent, or 0).
  spec.workload = mtperf::Workload::maerts;
  for (bool wide : {true, false}) {
    INFO("maerts, 64-bit counters: " << wide);
    mtperf::iperf3::ClientSettings settings;
    settings.udp_counters_64bit = wide;
    Iperf3Server server;
    opts.server = server.address();
    auto out = mtperf::iperf3::run_test(spec, opts, settings);
    REQUIRE(out.server.streams.size() == 1);
    const auto& f = out.test.client.flows.at(0);
    const uint64_t sent = uint64_t(out.server.streams[0].packets);
    CHECK(sent > 0);
    CHECK(f.stats.udp.received > 0);
    CHECK(f.stats.udp.highest_seq + 1 <= sent);
    CHECK(f.stats.udp.received + f.stats.udp.missing() <= sent);
    CHECK(f.total.bytes_recv == f.stats.udp.received * 1000);
    CHECK(f.total.errors == 0);  // every datagram carried a whole header and a sequence from 1
  }
}

TEST_CASE("what iperf3 cannot do is refused at once, exit 2, naming what it can") {
  for (const char* args :
       {"-w rr", "-w crr", "-p udp -w rr -r 64", "-P 129", "--warmup 0.5", "--verify"}) {
    auto r = mtperf_cmd(std::string("run --peer iperf3 -H 127.0.0.1:9 ") + args + " 2>&1");
    INFO(args);
    CHECK(r.rc == 2);
    CHECK(r.out.find("stream, maerts (-R) and bidir") != std::string::npos);
  }
  auto r = mtperf_cmd("run --peer iperf4 -H 127.0.0.1:9 2>&1");
  CHECK(r.rc == 2);
  CHECK(r.out.find("iperf4") != std::string::npos);
  r = mtperf_cmd("run --peer iperf3 2>&1");  // no -H
  CHECK(r.rc == 2);
}

TEST_CASE("a busy iperf3 server: its own words, exit 1") {
  Iperf3Server s(false);
  // A real iperf3 client holds the server for 2 s; mtperf comes while it runs.
  FILE* other = ::popen(("exec " + std::string(mtperf::test::kIperf3) + " -c 127.0.0.1 -p " +
                         std::to_string(s.port()) + " -t 2 >/dev/null 2>&1")
                            .c_str(),
                        "r");
  REQUIRE(other != nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto r = mtperf_cmd("run --peer iperf3 -H " + s.address() + " -l 0.2 2>&1");
  CHECK(r.rc == 1);
  CHECK(r.out.find("the server is busy running a test") != std::string::npos);
  ::pclose(other);
}

TEST_CASE("nothing listening: a clear error, exit 1") {
  auto r =
      mtperf_cmd("run --peer iperf3 -H 127.0.0.1:" + std::to_string(mtperf::test::free_port()) +
                 " -l 0.2 2>&1");
  CHECK(r.rc == 1);
  CHECK(r.out.find("127.0.0.1") != std::string::npos);
}
