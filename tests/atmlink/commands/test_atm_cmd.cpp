#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "atmlink/commands/cells_cmd.hpp"
#include "atmlink/commands/testbed_cmd.hpp"

using mtperf::atm::atm_cells_command;
using mtperf::atm::atm_decode_command;

namespace {

struct Result {
  int rc;
  std::string out, err;
};

Result cells(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int rc = atm_cells_command(args, out, err);
  return {rc, out.str(), err.str()};
}

Result decode(const std::string& input, const std::vector<std::string>& args = {}) {
  std::istringstream in(input);
  std::ostringstream out, err;
  const int rc = atm_decode_command(args, in, out, err);
  return {rc, out.str(), err.str()};
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream s(text);
  for (std::string l; std::getline(s, l);)
    lines.push_back(l);
  return lines;
}

// A 20-byte IPv4 header: version 4, so LLC/SNAP gets EtherType 0x0800.
const std::string kPacket = "4500001400000000400600007f0000017f000001";

}  // namespace

TEST_CASE("cells prints one 53-byte cell per line, and the exact bytes of a short PDU") {
  const Result r = cells({"--vpi", "0", "--vci", "32", "--encap", "llc", "--hex", "0102"});
  REQUIRE(r.rc == 0);
  const auto lines = lines_of(r.out);
  REQUIRE(lines.size() == 1);
  // Header 00 00 02 02 (VCI 32, PTI 001 = end of PDU) with its HEC; then LLC/SNAP, payload,
  // 30 pad bytes, UU 00, CPI 00, length 000a, CRC-32.
  CHECK(lines[0].size() == 106);
  CHECK(lines[0].rfind("00000202", 0) == 0);
  CHECK(lines[0].substr(10, 20) == "aaaa0300000008000102");
  CHECK(lines[0].substr(30, 60) == std::string(60, '0'));
  CHECK(lines[0].substr(90, 8) == "0000000a");
}

TEST_CASE("cells and decode round trip through a stream for each encapsulation") {
  std::string big;
  for (int i = 0; i < 300; ++i)
    big += kPacket;  // 6000 bytes: 126 cells with LLC/SNAP
  struct Case {
    std::vector<std::string> args;
    std::string header;
  };
  const std::vector<Case> cases = {
      {{"--vpi", "1", "--vci", "100", "--encap", "llc", "--hex", kPacket},
       "pdu 1: vpi 1 vci 100 encap llc ethertype 0x0800 cells 1..1 bytes 20"},
      {{"--vpi", "0", "--vci", "40", "--encap", "vcmux", "--hex", kPacket},
       "pdu 1: vpi 0 vci 40 encap vcmux cells 1..1 bytes 20"},
      {{"--vpi=2", "--vci=0x30", "--encap=llc", "--hex", big},
       "pdu 1: vpi 2 vci 48 encap llc ethertype 0x0800 cells 1..126 bytes 6000"},
  };
  for (const Case& c : cases) {
    const Result enc = cells(c.args);
    REQUIRE(enc.rc == 0);
    const Result dec = decode(enc.out);
    INFO(enc.out);
    CHECK(dec.rc == 0);
    const auto lines = lines_of(dec.out);
    REQUIRE(lines.size() == 2);
    CHECK(lines[0] == c.header);
    CHECK(lines[1] == c.args.back());
  }
}

TEST_CASE("lane frames round trip with their LECID and padding") {
  const std::string frame =
      "ffffffffffff020000000001"
      "0806"
      "0001";  // 16 bytes
  const Result enc =
      cells({"--vpi", "0", "--vci", "33", "--encap", "lane", "--lecid", "5", "--hex", frame});
  REQUIRE(enc.rc == 0);
  const Result dec = decode(enc.out, {"--encap", "lane"});
  REQUIRE(dec.rc == 0);
  const auto lines = lines_of(dec.out);
  CHECK(lines[0] == "pdu 1: vpi 0 vci 33 encap lane lecid 5 ethertype 0x0806 cells 1..2 bytes 60");
  CHECK(lines[1] == frame + std::string(88, '0'));
}

TEST_CASE("decode reads several PDUs, skips comments and blank lines") {
  const Result a = cells({"--vpi", "0", "--vci", "32", "--encap", "llc", "--hex", "01"});
  const Result b = cells({"--vpi", "0", "--vci", "33", "--encap", "vcmux", "--hex", "02"});
  const Result dec = decode("# two PDUs\n\n" + a.out + "\n" + b.out);
  CHECK(dec.rc == 0);
  const auto lines = lines_of(dec.out);
  REQUIRE(lines.size() == 4);
  CHECK(lines[2] == "pdu 2: vpi 0 vci 33 encap vcmux cells 2..2 bytes 1");
}

TEST_CASE("decode names the cell and the fault") {
  std::string big;
  for (int i = 0; i < 10; ++i)
    big += kPacket;
  const Result enc = cells({"--vpi", "0", "--vci", "32", "--encap", "llc", "--hex", big});
  auto lines = lines_of(enc.out);
  REQUIRE(lines.size() == 5);
  const auto join = [](const std::vector<std::string>& ls) {
    std::string s;
    for (const auto& l : ls)
      s += l + "\n";
    return s;
  };

  SECTION("header bit flip") {
    auto bad = lines;
    bad[2][5] = bad[2][5] == '0' ? '1' : '0';
    const Result r = decode(join(bad));
    CHECK(r.rc == 1);
    CHECK(r.err.find("cell 3: HEC error") != std::string::npos);
  }
  SECTION("payload bit flip") {
    auto bad = lines;
    bad[1][40] = bad[1][40] == '0' ? '1' : '0';
    const Result r = decode(join(bad));
    CHECK(r.rc == 1);
    CHECK(r.err.find("cell 5: CRC-32 error") != std::string::npos);
  }
  SECTION("last cell missing") {
    lines.pop_back();
    const Result r = decode(join(lines));
    CHECK(r.rc == 1);
    CHECK(r.err.find("cell 4: input ended inside a PDU") != std::string::npos);
  }
  SECTION("short line") {
    lines[1].pop_back();
    lines[1].pop_back();
    const Result r = decode(join(lines));
    CHECK(r.rc == 1);
    CHECK(r.err.find("cell 2 (line 2): expected 106 hex digits") != std::string::npos);
  }
  SECTION("no input") {
    const Result r = decode("");
    CHECK(r.rc == 1);
    CHECK(r.err.find("no cells") != std::string::npos);
  }
}

TEST_CASE("cells rejects bad input naming the option") {
  const auto err_of = [](const std::vector<std::string>& args) {
    const Result r = cells(args);
    CHECK(r.rc == 2);
    return r.err;
  };
  CHECK(err_of({"--vci", "32", "--encap", "llc", "--hex", "00"}).find("missing --vpi") !=
        std::string::npos);
  CHECK(err_of({"--vpi", "256", "--vci", "32", "--encap", "llc", "--hex", "00"})
            .find("--vpi: '256' is not a number in 0..255") != std::string::npos);
  CHECK(err_of({"--vpi", "0", "--vci", "x", "--encap", "llc", "--hex", "00"}).find("--vci") !=
        std::string::npos);
  CHECK(err_of({"--vpi", "0", "--vci", "32", "--encap", "aal1", "--hex", "00"}).find("--encap") !=
        std::string::npos);
  CHECK(err_of({"--vpi", "0", "--vci", "32", "--encap", "llc", "--hex", "0g"})
            .find("--hex: 'g' is not a hex digit") != std::string::npos);
  CHECK(err_of({"--vpi", "0", "--vci", "32", "--encap", "llc", "--hex", "012"})
            .find("--hex: odd number") != std::string::npos);
  CHECK(err_of({"--vpi", "0", "--vci", "32", "--encap", "llc", "--lecid", "3", "--hex", "00"})
            .find("--lecid applies to --encap lane") != std::string::npos);
  CHECK(err_of({"--vpi", "0", "--vci", "5", "--encap", "llc", "--hex", "00"})
            .find("VCI 5 is reserved") != std::string::npos);
  CHECK(err_of({"--vpi", "0", "--vci", "32", "--encap", "llc", "--hex"}).find("--hex needs") !=
        std::string::npos);
  CHECK(err_of({"--bogus"}).find("unrecognised option '--bogus'") != std::string::npos);
  CHECK(err_of({"--vpi", "0", "--vci", "32", "--encap", "lane", "--hex", "00"}).find("lane") !=
        std::string::npos);
  CHECK(cells({"--help"}).rc == 0);
  std::istringstream in;
  std::ostringstream out, err;
  CHECK(atm_decode_command({"--encap", "x"}, in, out, err) == 2);
  CHECK(err.str().find("--encap") != std::string::npos);
}

// `mtperf atm up && mtperf atm status`: `up` returns once the state file is written; a status
// that finds no counters file yet (or one being replaced) says so instead of failing.
TEST_CASE("atm status with a state file and no counters yet succeeds") {
  char tmpl[] = "/tmp/mtperf-atm-status-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const std::filesystem::path dir = tmpl;
  {
    std::ofstream state(dir / "atm-default.json");
    state << R"({"kind":"clip","pid":0,"rate_cells_per_s":1412830.0,"mtu":9180,)"
             R"("atm":{"adapters":1,"encap":"llc"},"near_ns":"a","far_ns":"b","links":[]})";
  }
  for (const char* stats : {"", "{}", "not json"}) {
    CAPTURE(stats);
    std::filesystem::remove(dir / "atm-default.stats.json");
    if (*stats) std::ofstream(dir / "atm-default.stats.json") << stats;
    std::ostringstream out, err;
    const int rc = mtperf::atm::atm_testbed_command(
        "status", {"--state-dir", dir.string(), "--name", "default"}, out, err);
    INFO(out.str() << err.str());
    CHECK(rc == 0);
    CHECK(err.str().empty());
    CHECK(out.str().find("atm testbed default: clip") != std::string::npos);
    CHECK(out.str().find("counters: none yet") != std::string::npos);
  }
  std::filesystem::remove_all(dir);
}
