// The rdma transport's options: verbs, their validation, the capabilities they give.
#include <catch2/catch.hpp>

#include "transports/rdma/settings.hpp"

using namespace mtperf;
using namespace mtperf::rdma;

TEST_CASE("verb: every choice parses and prints back") {
  for (auto v : {Verb::send, Verb::write, Verb::write_imm, Verb::read}) {
    CHECK(parse_verb(to_string(v)) == v);
  }
  CHECK(parse_rdma_settings({}).verb == Verb::send);
  CHECK(parse_rdma_settings({{"verb", "write_imm"}}).verb == Verb::write_imm);
}

TEST_CASE("verb: an unknown one is refused, listing the choices") {
  try {
    parse_rdma_settings({{"verb", "atomic"}});
    FAIL("no error");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()) ==
          "rdma option verb: expected send, write, write_imm or read, got 'atomic'");
  }
}

TEST_CASE("options: numbers are bounded, unknown keys named") {
  CHECK(parse_rdma_settings({{"inline", "64"}}).inline_cap == 64);
  CHECK(parse_rdma_settings({{"inline", "device"}}).inline_cap == kInlineDevice);
  CHECK(parse_rdma_settings({{"signal", "1"}}).signal_every == 1);
  CHECK(parse_rdma_settings({{"srq", "on"}}).srq == SrqMode::on);
  CHECK(parse_rdma_settings({{"recv_depth", "64"}}).recv_depth == 64);
  CHECK_THROWS_WITH(parse_rdma_settings({{"signal", "0"}}),
                    Catch::Contains("rdma option signal") && Catch::Contains("1..1024"));
  CHECK_THROWS_WITH(parse_rdma_settings({{"inline", "-1"}}), Catch::Contains("got '-1'"));
  CHECK_THROWS_WITH(parse_rdma_settings({{"inline", "12x"}}), Catch::Contains("got '12x'"));
  CHECK_THROWS_WITH(parse_rdma_settings({{"recv_depth", "1"}}), Catch::Contains("recv_depth"));
  CHECK_THROWS_WITH(parse_rdma_settings({{"srq", "maybe"}}), Catch::Contains("auto, on or off"));
  CHECK_THROWS_WITH(parse_rdma_settings({{"qp", "ud"}}), Catch::Contains("no option 'qp'"));
  for (auto& o : rdma_options())
    CHECK_NOTHROW(parse_rdma_settings({{o.key, o.default_value}}));
}

TEST_CASE("tx_depth: streams keep 128 sends in flight and signal one in 100, as perftest") {
  RdmaSettings d = parse_rdma_settings({});
  CHECK(d.tx_depth == 128);
  CHECK(d.signal_every == 100);
  CHECK(rdma_caps(d).stream_depth == 128);
  CHECK(parse_rdma_settings({{"tx_depth", "64"}}).tx_depth == 64);
  CHECK(rdma_caps(parse_rdma_settings({{"tx_depth", "512"}})).stream_depth == 512);
  CHECK(parse_rdma_settings({{"tx_depth", "1"}}).tx_depth == 1);
  CHECK(parse_rdma_settings({{"tx_depth", "4096"}}).tx_depth == 4096);
}

TEST_CASE("tx_depth: out of range or not a number, a clear error") {
  for (const char* bad : {"0", "4097", "-1", "128k", "", "deep"}) {
    INFO(bad);
    try {
      parse_rdma_settings({{"tx_depth", bad}});
      FAIL("no error");
    } catch (const std::invalid_argument& e) {
      CHECK(std::string(e.what()) ==
            std::string("rdma option tx_depth: expected a whole number in 1..4096, got '") + bad +
                "'");
    }
  }
  CHECK_THROWS_WITH(parse_rdma_settings({{"txdepth", "8"}}),
                    Catch::Contains("no option 'txdepth'") && Catch::Contains("tx_depth"));
  bool listed = false;
  for (auto& o : rdma_options())
    listed |= o.key == "tx_depth" && o.default_value == "128";
  CHECK(listed);
}

TEST_CASE("caps: write is one-sided, read has a passive sender") {
  auto caps = [](const char* v) { return rdma_caps(parse_rdma_settings({{"verb", v}})); };
  CHECK(caps("send").provides_recv_buffers);
  CHECK_FALSE(caps("send").one_sided);
  CHECK(caps("write").one_sided);
  CHECK_FALSE(caps("write_imm").one_sided);
  CHECK(caps("read").passive_sender);
  CHECK_FALSE(caps("write").passive_sender);
  CHECK(caps("send").unsignaled_sends);
  CHECK_FALSE(caps("send").linked_ops);
}

TEST_CASE("verbs refused where they cannot carry the workload") {
  CHECK(verb_refusal(Verb::send, false, false).empty());
  CHECK(verb_refusal(Verb::read, false, false).empty());
  CHECK(verb_refusal(Verb::write, true, false).empty());
  CHECK(verb_refusal(Verb::write_imm, true, false).empty());
  CHECK_THAT(verb_refusal(Verb::read, true, false), Catch::Contains("RDMA READ"));
  CHECK_THAT(verb_refusal(Verb::write, true, true), Catch::Contains("verb=send"));
  CHECK(verb_refusal(Verb::send, true, true).empty());
}

TEST_CASE("connect: cm by default, oob on request; gid_index only with oob; crr refused by oob") {
  CHECK(parse_rdma_settings({}).connect == ConnectMode::cm);
  RdmaSettings s = parse_rdma_settings({{"connect", "oob"}, {"gid_index", "3"}});
  CHECK(s.connect == ConnectMode::oob);
  CHECK(s.gid_index == 3);
  CHECK(parse_rdma_settings({{"connect", "oob"}}).gid_index == kUnset);
  CHECK_THROWS_WITH(parse_rdma_settings({{"gid_index", "1"}}), Catch::Contains("connect=oob"));
  CHECK_THROWS_WITH(parse_rdma_settings({{"connect", "ud"}}), Catch::Contains("cm or oob"));
  CHECK_THROWS_WITH(parse_rdma_settings({{"connect", "oob"}, {"gid_index", "256"}}),
                    Catch::Contains("gid_index"));
  CHECK(connect_refusal(ConnectMode::oob, true).find("connect=cm") != std::string::npos);
  CHECK(connect_refusal(ConnectMode::oob, false).empty());
  CHECK(connect_refusal(ConnectMode::cm, true).empty());
}
