// Writes seed inputs for every fuzz target, made by the project's own encoders, into
// <out>/<target>/: TEST frames of real tests, RESULT bodies of real results, WELCOME address
// lists, and for the ATM targets real cells and whole control exchanges recorded from the
// emulated link's stations (the join, LE_ARP and flush of LANE; the registration and address
// resolution of CLIP) in each target's step format.
//
//   fuzz_make_seeds DIR   (e.g. fuzz/corpus, or a scratch folder that ci/fuzz.sh adds)
#include <sys/socket.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "control/protocol.hpp"
#include "control/routes.hpp"
#include "control/side_json.hpp"
#include "workloads/spec.hpp"
#ifdef MTPERF_HAVE_ATM
#include "atmlink/clip_stations.hpp"
#include "atmlink/lane_stations.hpp"
#include "atmlink/pdu_tool.hpp"
#include "fuzz/atm_port.hpp"
#endif

namespace mtperf::fuzz {
namespace {

namespace fs = std::filesystem;
using Bytes8 = std::vector<uint8_t>;

void write(const fs::path& dir, const std::string& target, const std::string& name,
           const Bytes8& bytes) {
  fs::create_directories(dir / target);
  std::ofstream out(dir / target / name, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + (dir / target / name).string());
}

Bytes8 bytes_of(const std::string& s) {
  return Bytes8(s.begin(), s.end());
}

// --- control ---

TestSpec spec_of(Workload w, Proto p) {
  TestSpec s;
  s.workload = w;
  s.proto = p;
  return s;
}

void control_seeds(const fs::path& dir) {
  std::vector<std::pair<std::string, TestSpec>> tests;
  tests.emplace_back("stream_tcp", spec_of(Workload::stream, Proto::tcp));
  TestSpec rr = spec_of(Workload::rr, Proto::udp);
  rr.req_size = 64;
  rr.resp_size = 1024;
  rr.burst = 4;
  rr.flows = 8;
  rr.threads = 2;
  rr.interval_s = 1;
  tests.emplace_back("rr_udp_burst", rr);
  TestSpec bidir = spec_of(Workload::bidir, Proto::tcp);
  bidir.flows = 2;
  bidir.flow_servers = {"10.1.0.2", "10.2.0.2", "fd00::2", "10.2.0.2"};
  bidir.server_cpus = {0, 1};
  bidir.sock.sndbuf = 1 << 20;
  bidir.sock.congestion = "cubic";
  tests.emplace_back("bidir_placed", bidir);
  TestSpec crr = spec_of(Workload::crr, Proto::tcp);
  crr.req_size = 100;
  crr.resp_size = 200;
  crr.wait = Wait::spin;
  tests.emplace_back("crr_spin", crr);
  TestSpec paced = spec_of(Workload::maerts, Proto::udp);
  paced.rate_bps = 1e8;
  paced.msg_size = 1200;
  paced.measure = false;
  tests.emplace_back("maerts_udp_paced", paced);
  TestSpec uring = spec_of(Workload::rr, Proto::tcp);
  uring.transport = "uring";
  uring.transport_params = {{"multishot", "on"}};
  tests.emplace_back("rr_uring", uring);
  for (auto& [name, spec] : tests) {
    nlohmann::json body = {{"test", spec}};
    write(dir, "control_test", name, bytes_of(control::encode({control::MsgType::test, body})));
  }
  nlohmann::json hello = {{"version", control::kVersion}};
  write(dir, "control_test", "hello", bytes_of(control::encode({control::MsgType::hello, hello})));
}

FlowResult flow_of(uint32_t id, Role role) {
  FlowResult f;
  f.id = id;
  f.role = role;
  f.cpu = int(id % 2);
  f.window = {125000000, 125000000, 1907, 1907, 1907, 0};
  f.total = {137500000, 137500000, 2098, 2098, 2098, 0};
  return f;
}

void result_seeds(const fs::path& dir) {
  SideResult stream;
  stream.side = Side::server;
  stream.window_s = 1.0002;
  stream.flows = {flow_of(0, Role::receiver), flow_of(1, Role::receiver)};
  stream.flows[1].stats.tcp_info_valid = true;
  stream.flows[1].stats.tcp_rtt_us = 41;
  stream.flows[1].stats.tcp_cwnd = 10;
  stream.flows[1].stats.congestion = "cubic";
  stream.process = {0.05, 0.4, 3, 1};
  CpuUtilization cpu;
  cpu.cpus = 2;
  cpu.total = {45.5, 5, 0, 35, 1, 4.5, 0, 0, 54.5, 200};
  cpu.per_cpu = {{0, cpu.total}, {1, cpu.total}};
  stream.cpu = cpu;
  InterruptRates irq;
  irq.cpu_ids = {0, 1};
  irq.softirq_cpu_ids = {0, 1};
  irq.per_cpu_device = {120, 80};
  irq.per_cpu_all = {1200, 900};
  irq.softirqs = {{"NET_RX", {300, 200}, 500}, {"NET_TX", {3, 2}, 5}};
  irq.adapters = {{"eth0", {24, 25}, 200, {120, 80}}};
  stream.interrupts = irq;
  write(dir, "control_result", "stream_server", bytes_of(side_to_json(stream).dump()));

  SideResult rr;
  rr.side = Side::server;
  rr.window_s = 5;
  for (uint32_t i = 0; i < 4; ++i)
    rr.flows.push_back(flow_of(i, Role::rr_server));
  rr.flows[2].stats.error = "recv: Connection reset by peer";
  rr.errors = {"flow 2: recv: Connection reset by peer"};
  write(dir, "control_result", "rr_server_error", bytes_of(side_to_json(rr).dump()));

  SideResult udp;
  udp.side = Side::server;
  udp.window_s = 2;
  udp.flows = {flow_of(0, Role::receiver), flow_of(1, Role::sender)};
  udp.flows[0].stats.udp = {1900, 1907, true, 3, 1, 7, 15300, 0, true};
  write(dir, "control_result", "bidir_udp", bytes_of(side_to_json(udp).dump()));
}

void address_seeds(const fs::path& dir) {
  std::vector<InterfaceAddress> hosts = {{"lo", AF_INET, "127.0.0.1", 8},
                                         {"eth0", AF_INET, "10.1.0.2", 24},
                                         {"eth1", AF_INET, "10.2.0.2", 24},
                                         {"eth1", AF_INET6, "fd00::2", 64},
                                         {"eth1", AF_INET6, "fe80::1", 64}};
  nlohmann::json welcome = {{"version", control::kVersion},
                            {"addresses", control::addresses_to_json(hosts)}};
  write(dir, "control_addresses", "welcome", bytes_of(welcome.dump()));
  nlohmann::json one = {{"addresses", control::addresses_to_json({hosts[1]})}};
  write(dir, "control_addresses", "one_adapter", bytes_of(one.dump()));
}

#ifdef MTPERF_HAVE_ATM
using namespace mtperf::atm;

Bytes8 ipv4_packet(uint32_t src, uint32_t dst, size_t size) {
  Bytes8 p(size, 0);
  p[0] = 0x45;
  p[2] = uint8_t(size >> 8);
  p[3] = uint8_t(size);
  p[8] = 64;
  p[9] = 17;
  for (int i = 0; i < 4; ++i) {
    p[12 + i] = uint8_t(src >> (24 - 8 * i));
    p[16 + i] = uint8_t(dst >> (24 - 8 * i));
  }
  for (size_t i = 20; i < size; ++i)
    p[i] = uint8_t(i);
  return p;
}

Bytes8 ethernet_frame(const Mac& dst, const Mac& src, const Bytes8& ip) {
  Bytes8 f(dst.begin(), dst.end());
  f.insert(f.end(), src.begin(), src.end());
  f.push_back(0x08);
  f.push_back(0x00);
  f.insert(f.end(), ip.begin(), ip.end());
  return f;
}

void append_cells(Bytes8& out, const std::vector<Cell>& cells) {
  for (const Cell& c : cells)
    out.insert(out.end(), c.begin(), c.end());
}

void cell_seeds(const fs::path& dir) {
  const Bytes8 ip = ipv4_packet(0xC0A80A01, 0xC0A80A02, 100);
  PduCellsSpec llc;
  llc.vc = {0, 32};
  Bytes8 out = {0x00};  // UNI, auto
  append_cells(out, make_pdu_cells(llc, ip));
  append_cells(out, make_pdu_cells(llc, ipv4_packet(0xC0A80A02, 0xC0A80A01, 1500)));
  write(dir, "atm_cells", "llc_two_pdus", out);

  PduCellsSpec nni = llc;
  nni.format = HeaderFormat::kNni;
  nni.vc = {1000, 100};
  nni.encap = Encap::kVcMux;
  out = {0x05};  // NNI, vcmux
  append_cells(out, make_pdu_cells(nni, ip));
  write(dir, "atm_cells", "nni_vcmux", out);

  PduCellsSpec lane;
  lane.vc = {0, 37};
  lane.encap = Encap::kLane;
  lane.lecid = 2;
  out = {0x06};  // UNI, lane, 1516
  append_cells(
      out, make_pdu_cells(lane, ethernet_frame({2, 0, 0x5e, 0, 0, 2}, {2, 0, 0x5e, 0, 0, 1}, ip)));
  write(dir, "atm_cells", "lane_frame", out);

  // The same cells for the reassembler: raw cells, then SDUs it segments itself, then a poll.
  Bytes8 aal5 = {0x04, 0xFF, 0xFF, 0x00, 0x00, 0x00, 32};  // UNI, 1 ms timeout, VC 0/32
  for (const Cell& c : make_pdu_cells(llc, ip)) {
    aal5.push_back(0x00);
    aal5.insert(aal5.end(), c.begin(), c.end());
  }
  Bytes8 sdu = {0xAA, 0xAA, 0x03, 0x00, 0x00, 0x00, 0x08, 0x00};
  sdu.insert(sdu.end(), ip.begin(), ip.end());
  aal5.push_back(0x02);
  aal5.push_back(uint8_t(sdu.size() >> 8));
  aal5.push_back(uint8_t(sdu.size()));
  aal5.insert(aal5.end(), sdu.begin(), sdu.end());
  aal5.push_back(0x0B);  // poll, 2 µs later
  write(dir, "atm_aal5", "llc_raw_and_segmented", aal5);
}

// Records one exchange between the emulated link's stations in a target's step format: what
// reaches the target's stations becomes a step, what reaches the others is delivered unrecorded.
class Exchange {
 public:
  Exchange(const LinkConfig& config, uint8_t option) : port_(config) { out_.push_back(option); }

  FuzzPort& port() { return port_; }
  const Bytes8& bytes() const { return out_; }

  // A step of kind `kind` with `record`, as the target would read it.
  void step(uint8_t kind, std::span<const uint8_t> record) {
    out_.push_back(kind);
    out_.push_back(uint8_t(record.size() >> 8));
    out_.push_back(uint8_t(record.size()));
    out_.insert(out_.end(), record.begin(), record.end());
  }

  // Delivers what was sent until nothing more is: `kind_of(from, to)` is the step kind for a PDU
  // to a target station, or -1 for one to another station. After each step, `timers` runs the
  // target's timers, as the target does.
  template <class KindOf, class Timers>
  void pump(Station* const (&stations)[kStations], KindOf kind_of, Timers timers) {
    for (int rounds = 0; rounds < 1000 && !port_.sent.empty(); ++rounds) {
      std::vector<SentPdu> batch;
      batch.swap(port_.sent);
      for (const SentPdu& p : batch) {
        if (!stations[p.to]) continue;
        const int kind = kind_of(p.from, p.to);
        if (kind >= 0) step(uint8_t(kind), p.sdu);
        stations[p.to]->on_pdu(p.from, p.sdu, kNow, port_);
        if (kind >= 0) timers();
      }
    }
  }

  static constexpr uint64_t kNow = 1'000'000'000;

 private:
  FuzzPort port_;
  Bytes8 out_;
};

void clip_seed(const fs::path& dir, const std::string& name, uint8_t option) {
  LinkConfig c;
  c.mode = LinkMode::kClip;
  c.adapter = 7;
  c.inatmarp_pvc = option & 1;
  c.clip_encap = (option & 2) && !c.inatmarp_pvc ? Encap::kVcMux : Encap::kLlcSnap;
  c.subnet = 0xC0A80A00;
  c.near_ip = c.subnet + 1;
  c.far_ip = c.subnet + 2;
  c.server_ip = c.subnet + 254;
  c.mtu = 1500;
  c.max_pending = 4;
  HostCounters nc, fc;
  auto near = make_clip_host(c, kNearHost, nc);
  auto far = make_clip_host(c, kFarHost, fc);
  std::unique_ptr<Station> server;
  if (!c.inatmarp_pvc) server = make_atmarp_server_station(c);
  Station* const stations[kStations] = {near.get(), far.get(), server.get(), nullptr};
  Exchange x(c, option);
  auto kind_of = [](int from, int to) {
    if (to == kServer) return from == kNearHost ? 0 : 1;
    if (to == kNearHost) return from == kServer ? 2 : 3;
    return -1;
  };
  auto timers = [&] {
    near->on_timer(Exchange::kNow, x.port());
    if (server) server->on_timer(Exchange::kNow, x.port());
  };
  // The target starts the near host and the server; the far host's start is delivered as its
  // PDUs arrive.
  near->start(Exchange::kNow, x.port());
  if (server) server->start(Exchange::kNow, x.port());
  far->start(Exchange::kNow, x.port());
  x.pump(stations, kind_of, timers);
  const Bytes8 packet = ipv4_packet(c.near_ip, c.far_ip, 200);
  x.step(4, packet);
  near->from_host(packet, Exchange::kNow, x.port());
  timers();
  x.pump(stations, kind_of, timers);
  far->from_host(ipv4_packet(c.far_ip, c.near_ip, 300), Exchange::kNow, x.port());
  x.pump(stations, kind_of, timers);
  write(dir, "atm_atmarp", name, x.bytes());
}

void lane_seed(const fs::path& dir, const std::string& name, uint8_t option) {
  LinkConfig c;
  c.mode = LinkMode::kLane;
  c.adapter = 3;
  c.lane_max_frame = kLaneMaxFrameSizes[option & 3];
  c.mtu = c.lane_max_frame - kLaneFrameOverheadBytes;
  c.near_mac = {0x02, 0x00, 0x5e, 0x00, 0x00, 0x01};
  c.far_mac = {0x02, 0x00, 0x5e, 0x00, 0x00, 0x02};
  c.max_pending = 4;
  HostCounters nc, fc;
  ElanCounters elan;
  auto near = make_lane_client(c, kNearHost, nc);
  auto far = make_lane_client(c, kFarHost, fc);
  auto les = make_les_station(c, elan);
  auto bus = make_bus_station(elan);
  Station* const stations[kStations] = {near.get(), far.get(), les.get(), bus.get()};
  Exchange x(c, option);
  auto kind_of = [](int from, int to) {
    if (to == kServer) return from == kNearHost ? 0 : 1;
    if (to == kBus) return from == kNearHost ? 2 : 3;
    if (to == kNearHost) return from == kServer ? 4 : from == kBus ? 5 : 6;
    return -1;
  };
  auto timers = [&] {
    for (Station* s : {near.get(), les.get(), bus.get()})
      s->on_timer(Exchange::kNow, x.port());
  };
  for (Station* s : {near.get(), les.get(), bus.get(), far.get()})
    s->start(Exchange::kNow, x.port());
  x.pump(stations, kind_of, timers);
  const Bytes8 ip = ipv4_packet(0xC0A80B01, 0xC0A80B02, 200);
  for (const Mac& dst : {c.far_mac, Mac{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, c.far_mac}) {
    const Bytes8 frame = ethernet_frame(dst, c.near_mac, ip);
    x.step(7, frame);
    near->from_host(frame, Exchange::kNow, x.port());
    timers();
    x.pump(stations, kind_of, timers);
  }
  far->from_host(ethernet_frame(c.near_mac, c.far_mac, ip), Exchange::kNow, x.port());
  x.pump(stations, kind_of, timers);
  write(dir, "atm_lane", name, x.bytes());
}

void atm_seeds(const fs::path& dir) {
  cell_seeds(dir);
  clip_seed(dir, "server_llc", 0);
  clip_seed(dir, "server_vcmux", 2);
  clip_seed(dir, "inatmarp_pvc", 1);
  lane_seed(dir, "join_arp_flush_1516", 0);
  lane_seed(dir, "join_arp_flush_9234", 2);
}
#endif

}  // namespace
}  // namespace mtperf::fuzz

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_make_seeds DIR\n");
    return 2;
  }
  try {
    const std::filesystem::path dir = argv[1];
    mtperf::fuzz::control_seeds(dir);
    mtperf::fuzz::result_seeds(dir);
    mtperf::fuzz::address_seeds(dir);
#ifdef MTPERF_HAVE_ATM
    mtperf::fuzz::atm_seeds(dir);
#endif
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_make_seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
