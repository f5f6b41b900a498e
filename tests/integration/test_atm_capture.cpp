// Captures of the emulated ATM line, decoded by tshark as Wireshark would, as root: every record
// decodes with nothing malformed; the PDUs per VPI/VCI equal the line's own VC counters exactly;
// the control traffic of each mode is there (ATMARP and InATMARP for CLIP, LE_JOIN and LE_ARP for
// LANE); in erf-aal5 every PDU's CRC reads correct except exactly those the injected cell loss and
// HEC errors broke; in erf-cells, every cell the VCs counted. Then the options as users give them:
// `mtperf run -T clip -O capture=FILE` and `mtperf atm up --capture FILE`. Skipped without root,
// /dev/net/tun or tshark. About 20 s.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "atmlink/emu/testbed.hpp"
#include "tests/support/command.hpp"
#include "tests/support/skip.hpp"

using mtperf::test::CommandResult;
using mtperf::test::mtperf_cmd;
using mtperf::test::run_command;
using nlohmann::json;
namespace atm = mtperf::atm;

namespace {

std::string why_no_tun() {
  std::string why = mtperf::test::why_not_root("the emulated ATM link");
  struct stat st;
  if (why.empty() && ::stat("/dev/net/tun", &st) != 0) why = "no /dev/net/tun (modprobe tun)";
  return why;
}

std::string why_no_tshark() {
  return std::system("tshark --version >/dev/null 2>&1") == 0
             ? ""
             : "tshark is not installed (apt-get install tshark, or bash ci/deps.sh)";
}

std::string capture_path(const std::string& tag) {
  return "/tmp/mtperf-itest-capture-" + std::to_string(::getpid()) + "-" + tag + ".pcapng";
}

// tshark's output on the file, its standard error dropped.
std::string tshark(const std::string& file, const std::string& args) {
  const CommandResult r = run_command("tshark -r " + file + " " + args + " 2>/dev/null");
  REQUIRE(r.rc == 0);
  return r.out;
}

std::size_t lines(const std::string& text) {
  std::size_t n = 0;
  for (const char c : text)
    n += c == '\n';
  return n;
}

// Records per "vpi/vci" as tshark reads them.
std::map<std::string, std::uint64_t> per_vc(const std::string& file, const std::string& opts) {
  std::map<std::string, std::uint64_t> out;
  std::istringstream in(tshark(file, opts + " -T fields -e atm.vpi -e atm.vci"));
  std::string vpi, vci;
  while (in >> vpi >> vci)
    ++out[vpi + "/" + vci];
  return out;
}

// The PDUs per "vpi/vci" the line's VCs counted: delivered, or (with_bad) every PDU that ended;
// or (cells) the cells that arrived on each VC.
enum class Count { delivered, ended, cells };
std::map<std::string, std::uint64_t> counted(const json& adapters, Count what) {
  std::map<std::string, std::uint64_t> out;
  for (const json& v : adapters[0]["vcs"]) {
    std::uint64_t n = v[what == Count::cells ? "rx_cells" : "rx_pdus"].get<std::uint64_t>();
    if (what == Count::ended)
      n += v["crc_errors"].get<std::uint64_t>() + v["length_errors"].get<std::uint64_t>();
    if (n > 0)
      out[std::to_string(v["vpi"].get<int>()) + "/" + std::to_string(v["vci"].get<int>())] = n;
  }
  return out;
}

// Builds a one-adapter testbed capturing into `file`, sends 40 datagrams across it, stops its lines
// and returns their counters; the testbed goes (closing the file) before this returns.
json run_capture(atm::AtmTestbedOptions o, const std::string& file) {
  o.capture.path = file;
  json adapters;
  {
    atm::AtmTestbed bed(o);
    const mtperf::TestHosts hosts = bed.hosts();
    // 40 UDP datagrams of 1400 bytes to the discard port (bash's /dev/udp: no tool needed);
    // each comes back as an ICMP port unreachable.
    const CommandResult send = run_command(
        "ip netns exec " + hosts.near_ns + " bash -c 'for i in $(seq 40); do head -c 1400 " +
        "/dev/zero > /dev/udp/" + hosts.links[0].far_addr + "/9; sleep 0.01; done' 2>&1");
    CHECK(send.rc == 0);
    ::usleep(200'000);  // the last answers cross
    bed.stop_lines();
    adapters = bed.stats_json();
  }
  return adapters;
}

// Every record decodes, nothing malformed, and every IP, TCP and UDP checksum verified good (the
// TUN and TAP devices run without checksum offload, so none is left partial).
void check_clean(const std::string& file, const std::string& opts) {
  INFO(file);
  CHECK(lines(tshark(file, opts)) > 0);
  const std::string checks =
      " -o ip.check_checksum:TRUE -o tcp.check_checksum:TRUE -o udp.check_checksum:TRUE";
  CHECK(tshark(file, opts + checks + " -Y '_ws.malformed or _ws.expert.severity >= \"Error\"'")
            .empty());
}

}  // namespace

MTPERF_TEST_REQUIRES(why_no_tun());
MTPERF_TEST_REQUIRES(why_no_tshark());

TEST_CASE("a CLIP sunatm capture decodes, with ATMARP and InATMARP, PDUs as the VCs counted") {
  const std::string file = capture_path("clip");
  atm::AtmTestbedOptions o;
  o.mode = atm::LinkMode::kClip;
  o.rate = atm::kOc3c;
  o.tag = "capclip";
  const json adapters = run_capture(o, file);
  check_clean(file, "");
  CHECK(per_vc(file, "") == counted(adapters, Count::delivered));
  // InATMARP request (8) and reply (9) on the server's VCs, ATMARP request (1) and reply (2).
  for (const char* op : {"1", "2", "8", "9"})
    CHECK(!tshark(file, std::string("-Y 'arp.opcode == ") + op + "'").empty());
  CHECK(lines(tshark(file,
                     "-Y 'atm.channel == 0 && !icmp && udp.dstport == 9 && udp.length == 1408'")) ==
        40);
  CHECK(lines(tshark(file, "-Y 'atm.channel == 0'")) > 0);  // both directions
  CHECK(lines(tshark(file, "-Y 'atm.channel == 1'")) > 0);
  std::remove(file.c_str());
}

TEST_CASE("a LANE sunatm capture decodes, with LE_JOIN and LE_ARP, PDUs as the VCs counted") {
  const std::string file = capture_path("lane");
  atm::AtmTestbedOptions o;
  o.mode = atm::LinkMode::kLane;
  o.rate = atm::kOc3c;
  o.tag = "caplane";
  const json adapters = run_capture(o, file);
  check_clean(file, "");
  CHECK(per_vc(file, "") == counted(adapters, Count::delivered));
  // LE_JOIN request/response (0x0002/0x0102), LE_ARP request/response (0x0006/0x0106).
  for (const char* op : {"0x0002", "0x0102", "0x0006", "0x0106"})
    CHECK(!tshark(file, std::string("-Y 'atm.le_control.opcode == ") + op + "'").empty());
  // Near to far (VCI 33), the first one by way of the BUS (35, forwarded to far on 45).
  CHECK(lines(tshark(file,
                     "-Y '(atm.vci == 33 || atm.vci == 35) && !icmp && udp.dstport == 9 && "
                     "udp.length == 1408'")) == 40);
  std::remove(file.c_str());
}

TEST_CASE("an erf-aal5 capture shows the CRCs the line's faults broke, and only those, as bad") {
  const std::string file = capture_path("erf");
  atm::AtmTestbedOptions o;
  o.mode = atm::LinkMode::kClip;
  o.rate = atm::kOc3c;
  o.tag = "caperf";
  o.capture.format = atm::CaptureFormat::kErfAal5;
  o.faults.payload_ber = 3e-5;      // bits flipped in the payload: the CRC fails, the length holds
  o.faults.cell_loss_rate = 0.002;  // cells missing: the CRC and the length both fail
  o.faults.hec_error_rate = 0.002;
  o.faults.seed = 11;
  const json adapters = run_capture(o, file);
  const std::string opts = "-o erf.aal5_type:unspec";
  CHECK(per_vc(file, opts) == counted(adapters, Count::ended));
  std::uint64_t good = 0, bad = 0;
  for (const json& v : adapters[0]["vcs"]) {
    good += v["rx_pdus"].get<std::uint64_t>();
    bad += v["crc_errors"].get<std::uint64_t>() + v["length_errors"].get<std::uint64_t>();
  }
  // Per record: "AAL5 CRC: 0x... (correct)" or "(incorrect)"; Wireshark shows no trailer at
  // all when the length field does not fit the PDU's cells (a cell was lost).
  const std::string verbose = "\n" + tshark(file, opts + " -V");
  std::uint64_t correct = 0, incorrect = 0, no_trailer = 0;
  std::size_t at = verbose.find("\nFrame ");
  for (; at != std::string::npos;) {
    const std::size_t next = verbose.find("\nFrame ", at + 1);
    const std::string frame = verbose.substr(at, next == std::string::npos ? next : next - at);
    if (frame.find("AAL5 CRC: 0x") == std::string::npos) {
      ++no_trailer;
    } else {
      const bool failed = frame.find(" (incorrect)") != std::string::npos;
      incorrect += failed;
      correct += !failed;
    }
    at = next;
  }
  INFO("good " << good << " bad " << bad << " correct " << correct << " incorrect " << incorrect
               << " no trailer " << no_trailer);
  CHECK(bad > 0);
  CHECK(incorrect > 0);
  CHECK(correct == good);
  CHECK(incorrect + no_trailer == bad);
  // Only broken PDUs may carry malformed contents.
  CHECK(lines(tshark(file, opts + " -Y '_ws.malformed or _ws.expert.severity >= \"Error\"'")) <=
        bad);
  std::remove(file.c_str());
}

TEST_CASE("an erf-cells capture decodes cell by cell, as many cells per VC as the line counted") {
  const std::string file = capture_path("cells");
  atm::AtmTestbedOptions o;
  o.mode = atm::LinkMode::kClip;
  o.rate = atm::kOc3c;
  o.tag = "capcell";
  o.capture.format = atm::CaptureFormat::kErfCells;
  const json adapters = run_capture(o, file);
  check_clean(file, "");
  const auto cells = per_vc(file, "");
  CHECK(cells == counted(adapters, Count::cells));
  // A 1,400-byte datagram is 1,436 bytes with LLC/SNAP and the trailer: 30 cells. The 40 of
  // them go near to far on VCI 33, with nothing but the address resolution's few beside.
  CHECK(cells.at("0/33") >= 40 * 30);
  // Cells carry no reassembly: no AAL5 trailer is decoded, only the cell headers.
  CHECK(tshark(file, "-Y 'atm.aal5t_len'").empty());
  std::remove(file.c_str());
}

TEST_CASE("-O capture= on mtperf run and --capture on mtperf atm up write clean captures") {
  const std::string run_file = capture_path("run");
  const CommandResult r = mtperf_cmd(
      "run -T clip --atm-rate oc3 -w rr -l 0.5 --warmup 0.1 -q "
      "-O capture=" +
      run_file + " -O capture_format=erf-aal5 2>&1");
  CHECK(r.rc == 0);
  CHECK_THAT(r.out, Catch::Contains("capture " + run_file + ": "));
  check_clean(run_file, "-o erf.aal5_type:unspec");
  CHECK(!tshark(run_file, "-o erf.aal5_type:unspec -Y 'arp.opcode == 8'").empty());
  CHECK(!tshark(run_file, "-o erf.aal5_type:unspec -Y 'tcp'").empty());
  std::remove(run_file.c_str());

  const CommandResult bad = mtperf_cmd("run -T clip -O capture_format=pcap -l 0.3 2>&1");
  CHECK(bad.rc == 2);
  CHECK_THAT(bad.out, Catch::Contains("capture_format"));

  const std::string up_file = capture_path("up");
  const std::string name = "itest-capture";
  mtperf_cmd("atm down --name " + name + " 2>/dev/null");
  const CommandResult up = mtperf_cmd("atm up --mode lane --atm-rate oc3 --name " + name +
                                      " --capture " + up_file + " --capture-snap 128");
  REQUIRE(up.rc == 0);
  const CommandResult rr =
      mtperf_cmd("run -T lane --testbed " + name + " -w rr -l 0.3 --warmup 0.1 -q");
  CHECK(rr.rc == 0);
  const CommandResult refused =
      mtperf_cmd("run -T lane --testbed " + name + " -O capture=/tmp/x.pcapng -l 0.3 2>&1");
  CHECK(refused.rc == 2);
  CHECK_THAT(refused.out, Catch::Contains("mtperf atm up --capture"));
  ::sleep(2);  // the daemon rewrites its counters, with the capture's summary, every second
  CHECK_THAT(mtperf_cmd("atm status --name " + name).out,
             Catch::Contains("capture " + up_file + ": "));
  CHECK(mtperf_cmd("atm down --name " + name).rc == 0);
  check_clean(up_file, "");
  CHECK(!tshark(up_file, "-Y 'atm.le_control.opcode == 0x0002'").empty());
  CHECK(!tshark(up_file, "-Y 'tcp'").empty());
  std::remove(up_file.c_str());
}

TEST_CASE("LE_ARP flooding on a real line: the LES floods, the proxy LEC answers, the LES relays") {
  const std::string file = capture_path("proxy");
  atm::AtmTestbedOptions o;
  o.mode = atm::LinkMode::kLane;
  o.rate = atm::kOc3c;
  o.tag = "capproxy";
  o.lane_proxy_macs = {atm::Mac{0x02, 0x00, 0x00, 0x00, 0x00, 0x42}};
  o.capture.path = file;
  json adapters;
  {
    atm::AtmTestbed bed(o);
    const mtperf::TestHosts hosts = bed.hosts();
    // A station behind the far LEC, by a static neighbour entry: the near LEC has to LE_ARP.
    const std::string ns = "ip netns exec " + hosts.near_ns + " ";
    CHECK(run_command(ns + "ip neigh replace 10.233.0.99 lladdr 02:00:00:00:00:42 dev " +
                      hosts.links[0].near_if)
              .rc == 0);
    CHECK(run_command(ns + "bash -c 'for i in 1 2 3; do echo x > /dev/udp/10.233.0.99/9; " +
                      "sleep 0.05; done'")
              .rc == 0);
    ::usleep(200'000);
    bed.stop_lines();
    adapters = bed.stats_json();
  }
  const json& elan = adapters[0]["elan"];
  CHECK(elan["le_arp_flooded"] == 1);
  CHECK(elan["le_arp_relayed"] == 1);
  CHECK(adapters[0]["hosts"]["near"]["flushes"] == 1);
  // Request LES -> far (VCI 41), the far LEC's answer far -> LES (38), relayed LES -> near (40).
  CHECK(lines(tshark(file, "-Y 'atm.le_control.opcode == 0x0006 && atm.vci == 41'")) == 1);
  CHECK(lines(tshark(file, "-Y 'atm.le_control.opcode == 0x0106 && atm.vci == 38'")) == 1);
  CHECK(lines(tshark(file,
                     "-Y 'atm.le_control.opcode == 0x0106 && atm.vci == 40 && "
                     "atm.lan_destination.mac == 02:00:00:00:00:42'")) == 1);
  check_clean(file, "");
  std::remove(file.c_str());
}
