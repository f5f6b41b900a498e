#include "atmlink/commands/testbed_cmd.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "atmlink/emu/testbed.hpp"
#include "atmlink/line_flags.hpp"
#include "platform/affinity.hpp"
#include "platform/command_line.hpp"
#include "platform/netns.hpp"
#include "platform/number.hpp"

namespace mtperf::atm {
namespace {

using cli::CommandLine;
using cli::CommandSpec;
using cli::read_command_line;
using cli::usage_error;
using cli::UsageError;

namespace fs = std::filesystem;
using nlohmann::json;

namespace po = boost::program_options;

constexpr auto kDownTimeout = std::chrono::seconds(10);

// --name NAME, and the hidden --state-dir DIR (tests) of every subcommand. `status` without
// --name shows every testbed.
CommandSpec spec_with_name(const std::string& sub, const std::string& synopsis,
                           const std::string& summary) {
  CommandSpec spec("atm " + sub, synopsis, summary);
  if (sub == "status") {
    spec.options.add_options()("name", po::value<std::string>()->value_name("NAME"),
                               "show testbed NAME only (default: every testbed that is up)");
  } else {
    cli::add_testbed_name(spec);
  }
  cli::add_testbed_state_dir(spec);
  return spec;
}

CommandSpec up_spec() {
  CommandSpec spec = spec_with_name(
      "up", "--mode clip|lane [--adapters N] [--atm-rate oc3|oc12|CELLS] [--atm-mtu M] [options]",
      "Builds two namespaces joined by N emulated ATM adapter pairs, run by a daemon until "
      "`mtperf atm down` (root).");
  auto add = spec.options.add_options();
  auto text = [](const char* var) { return po::value<std::string>()->value_name(var); };
  add("mode", text("MODE"), "clip (Classical IP, RFC 2225) | lane (LAN Emulation); required");
  add("adapters", text("N"),
      "emulated adapter pairs, 1..256, one subnet each: 10.232.<i>.0/24 (CLIP) or "
      "10.233.<i>.0/24 (LANE) (default 1)");
  // The line's rate, MTU and capture: the flags `mtperf run -T clip|lane` takes too.
  cli::add_flag_options(add, atm::atm_line_flags());
  add("irq-cpus", text("CPU-LIST"),
      "interrupt CPUs, adapter i on the (i mod n)-th (default: the online CPUs in turn)");
  add("encap", text("ENCAP"), "CLIP data VCs: llc | vcmux (default llc)");
  add("inatmarp", po::bool_switch(),
      "CLIP: the hosts learn each other's address with InATMARP on their PVC, without the ATMARP "
      "server (needs --encap llc)");
  add("max-frame", text("BYTES"),
      "--mode lane: maximum frame (LECID + 802.3 header + MTU), 1516 | 4544 | 9234 | 18190 "
      "(default: the smallest that carries --atm-mtu, 1516 without it)");
  add("lane-proxy", text("MAC[,MAC...]"),
      "--mode lane: the far host's LEC is a proxy LEC for these MACs (at most 16): it answers the "
      "LE_ARP requests the LES floods for them");
  add("delay-us", text("MICROSECONDS"), "one-way propagation delay, 0..1e6 (default 0)");
  add("cell-loss", text("P"), "probability that a cell is lost, 0..1 (default 0)");
  add("hec-errors", text("P"), "probability of a header (HEC) error per cell, 0..1 (default 0)");
  add("ber", text("P"), "payload bit error rate, 0..1 (default 0)");
  add("seed", text("S"), "seed of the fault injection, 0..1e18 (default 1)");
  add("corrupt-after-crc", text("P|every:N"),
      "change 1..8 payload bytes of a PDU after its CRC passed (L4 checksum fixed up), with "
      "probability P or every Nth eligible PDU (default off)");
  add("duplicate", text("P|every:N"), "deliver an eligible PDU twice (default off)");
  add("reorder", text("P|every:N"),
      "hold an eligible PDU back and deliver it after the next one (default off)");
  add("fault-dir", text("DIR"),
      "the lines the PDU faults apply to: both | near-to-far | far-to-near (default both)");
  add("fault-proto", text("PROTO"), "PDUs eligible for PDU faults: any | tcp | udp (default any)");
  add("fault-min-payload", text("BYTES"),
      "eligible PDUs carry at least this much TCP/UDP payload, 0..65535 (default 0; always more "
      "than 16)");
  // The names `mtperf run` gives the same things; the old ones meant otherwise elsewhere.
  spec.aliases = {{"rate", "atm-rate"}, {"mtu", "atm-mtu"}, {"cpus", "irq-cpus"}};
  return spec;
}

double number(const CommandLine& cl, const std::string& name, double low, double high,
              double fallback) {
  if (!cl.has(name)) return fallback;
  const std::string text = cl.get<std::string>(name);
  const std::optional<double> v = parse_scaled(text, {});
  if (!v || !(*v >= low && *v <= high)) {
    throw UsageError(
        fmt::format("option {}: '{}' is not a number in {}..{}", cl.typed(name), text, low, high));
  }
  return *v;
}

// A text option through `parse`, whose std::invalid_argument becomes a UsageError naming it.
template <class F>
void parsed(const CommandLine& cl, const char* name, F parse) {
  if (!cl.has(name)) return;
  try {
    parse(cl.get<std::string>(name));
  } catch (const std::invalid_argument& e) {
    throw UsageError("option " + cl.typed(name) + ": " + e.what());
  }
}

// The faults after reassembly (atmlink/pdu_faults.hpp).
void add_pdu_faults(const CommandLine& cl, atm::PduFaultConfig& p) {
  parsed(cl, "corrupt-after-crc",
         [&](const std::string& v) { p.corrupt = atm::parse_fault_trigger(v); });
  parsed(cl, "duplicate", [&](const std::string& v) { p.duplicate = atm::parse_fault_trigger(v); });
  parsed(cl, "reorder", [&](const std::string& v) { p.reorder = atm::parse_fault_trigger(v); });
  parsed(cl, "fault-dir",
         [&](const std::string& v) { p.direction = atm::parse_fault_direction(v); });
  parsed(cl, "fault-proto", [&](const std::string& v) { p.proto = atm::parse_fault_proto(v); });
  p.min_payload = std::size_t(number(cl, "fault-min-payload", 0, 65535, 0));
}

// "02:00:00:00:00:42,02:00:00:00:00:43": unicast MACs, at most 16.
std::vector<atm::Mac> parse_macs(const std::string& text) {
  std::vector<atm::Mac> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string word = text.substr(at, comma - at);
    atm::Mac m{};
    unsigned b[6];
    char tail = 0;
    if (std::sscanf(word.c_str(), "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4],
                    &b[5], &tail) != 6 ||
        word.size() != 17)
      throw std::invalid_argument("'" + word + "' is not a MAC address (02:00:00:00:00:42)");
    for (int i = 0; i < 6; ++i)
      m[std::size_t(i)] = std::uint8_t(b[i]);
    if ((m[0] & 1) != 0) throw std::invalid_argument(word + " is a group address, not a station's");
    out.push_back(m);
    at = comma + 1;
  }
  if (out.size() > 16) throw std::invalid_argument("at most 16 MACs");
  return out;
}

// The line flags (atmlink/line_flags.hpp): rate, MTU and the capture, whose file the daemon opens
// from its own directory.
void add_line_flags(const CommandLine& cl, atm::AtmTestbedOptions& t) {
  OptionValues v;
  try {
    v = parse_flag_options(atm::atm_line_flags(), cli::given_flags(cl.vm, atm::atm_line_flags()),
                           [&](const FlagOption& f) { return "option " + cl.typed(f.flag); });
    t.capture = atm::capture_of(v, [&](const char* key) {
      std::string flag = key;
      std::replace(flag.begin(), flag.end(), '_', '-');
      return "option " + cl.typed(flag);
    });
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  t.rate = atm::line_rate_of(v);
  t.mtu = atm::line_mtu_of(v);
  if (!t.capture.path.empty()) t.capture.path = fs::absolute(t.capture.path).string();
}

atm::AtmTestbedOptions up_options(const CommandLine& cl) {
  atm::AtmTestbedOptions t;
  if (!cl.has("mode")) throw UsageError("option --mode clip|lane is required");
  parsed(cl, "mode", [&](const std::string& v) { t.mode = atm::parse_link_mode(v); });
  parsed(cl, "encap", [&](const std::string& v) { t.encap = atm::parse_encap(v); });
  parsed(cl, "irq-cpus", [&](const std::string& v) { t.cpus = parse_cpu_list(v); });
  t.adapters = int(number(cl, "adapters", 1, atm::kMaxAtmAdapters, 1));
  add_line_flags(cl, t);
  t.inatmarp_pvc = cl.get<bool>("inatmarp");
  t.lane_max_frame = std::size_t(number(cl, "max-frame", 1516, 18190, 0));
  if (cl.has("max-frame")) {
    if (t.mode != atm::LinkMode::kLane)
      throw UsageError("option " + cl.typed("max-frame") + " applies to --mode lane only");
    parsed(cl, "max-frame",
           [&](const std::string&) { atm::lane_max_frame_code(t.lane_max_frame); });
  }
  if (cl.has("lane-proxy")) {
    if (t.mode != atm::LinkMode::kLane)
      throw UsageError("option " + cl.typed("lane-proxy") + " applies to --mode lane only");
    parsed(cl, "lane-proxy", [&](const std::string& v) { t.lane_proxy_macs = parse_macs(v); });
  }
  t.propagation_ns = std::uint64_t(number(cl, "delay-us", 0, 1e6, 0) * 1000);
  t.faults.cell_loss_rate = number(cl, "cell-loss", 0, 1, 0);
  t.faults.hec_error_rate = number(cl, "hec-errors", 0, 1, 0);
  t.faults.payload_ber = number(cl, "ber", 0, 1, 0);
  t.faults.seed = std::uint64_t(number(cl, "seed", 0, 1e18, 1));
  add_pdu_faults(cl, t.pdu_faults);
  return t;
}

std::string state_path(const std::string& dir, const std::string& name) {
  return atm::atm_state_path(name, dir);
}
std::string stats_path(const std::string& dir, const std::string& name) {
  return atm::atm_stats_path(name, dir);
}

void write_json(const std::string& path, const json& j) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << j.dump(2) << "\n";
    if (!out) throw std::runtime_error("cannot write " + tmp);
  }
  fs::rename(tmp, path);
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) return json();
  json j = json::parse(in, nullptr, false);
  return j.is_discarded() ? json() : j;
}

void write_all(int fd, const std::string& text) {
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += std::size_t(n);
  }
}

// Adds the cells/s each line achieved since the previous sample.
void add_rates(json& stats, const json& previous, double dt_s) {
  for (std::size_t i = 0; i < stats.size(); ++i) {
    for (const char* line : {"near_to_far", "far_to_near"}) {
      json& l = stats[i]["lines"][line];
      double rate = 0;
      if (dt_s > 0 && previous.is_array() && i < previous.size()) {
        const auto before = previous[i]["lines"][line].value("cells_sent", std::uint64_t{0});
        rate = double(l.value("cells_sent", std::uint64_t{0}) - before) / dt_s;
      }
      l["achieved_cells_per_s"] = rate;
    }
  }
}

// The daemon: builds the testbed, reports to the parent through `report_fd`, then rewrites
// the stats file every second until SIGTERM, SIGINT or SIGHUP, and removes everything.
[[noreturn]] void daemon_main(const atm::AtmTestbedOptions& options, const std::string& name,
                              const std::string& dir, int report_fd) {
  sigset_t stop;
  sigemptyset(&stop);
  for (int s : {SIGTERM, SIGINT, SIGHUP})
    sigaddset(&stop, s);
  // Blocked before any thread exists, so every thread inherits the mask and sigtimedwait
  // below is the only place these signals land.
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd : {0, 1, 2})
    ::dup2(null_fd, fd);
  int rc = 0;
  try {
    atm::AtmTestbed bed(options);
    json state = bed.state();
    state["name"] = name;
    state["pid"] = ::getpid();
    state["stats_file"] = stats_path(dir, name);
    // The first counters before the state file: `up` returns on the report below, and a
    // `status` right after it finds both files.
    {
      json first = bed.stats_json();
      add_rates(first, json(), 0);
      json file{{"adapters", first}, {"pid", ::getpid()}};
      if (!options.capture.path.empty()) file["capture"] = bed.capture_summary();
      write_json(stats_path(dir, name), file);
    }
    write_json(state_path(dir, name), state);
    write_all(report_fd, "ok\n" + state.dump());
    ::close(report_fd);
    report_fd = -1;
    json previous;
    auto last = std::chrono::steady_clock::now();
    const timespec second{1, 0};
    for (;;) {
      json stats = bed.stats_json();
      const auto now = std::chrono::steady_clock::now();
      add_rates(stats, previous, std::chrono::duration<double>(now - last).count());
      json file{{"adapters", stats}, {"pid", ::getpid()}};
      if (!options.capture.path.empty()) file["capture"] = bed.capture_summary();
      write_json(stats_path(dir, name), file);
      previous = std::move(stats);
      last = now;
      if (sigtimedwait(&stop, nullptr, &second) > 0) break;
    }
  } catch (const std::exception& e) {
    if (report_fd >= 0) write_all(report_fd, std::string("error: ") + e.what());
    rc = 1;
  }
  std::error_code ec;
  fs::remove(stats_path(dir, name), ec);
  fs::remove(state_path(dir, name), ec);  // last: `down` waits for it to go
  ::_exit(rc);
}

int up(const CommandLine& cl, const std::string& name, const std::string& dir, std::ostream& out,
       std::ostream& err) {
  atm::AtmTestbedOptions options = up_options(cl);
  options.tag = name;
  options.lasting = true;
  if (fs::exists(state_path(dir, name))) {
    err << "mtperf atm up: testbed '" << name << "' is already up; run `mtperf atm down --name "
        << name << "` first or choose another --name\n";
    return 1;
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (child == 0) {
    ::close(fds[0]);
    ::setsid();  // out of the caller's session: the terminal closing does not stop the link
    const pid_t daemon = ::fork();
    if (daemon != 0) ::_exit(daemon < 0 ? 1 : 0);
    daemon_main(options, name, dir, fds[1]);
  }
  ::close(fds[1]);
  int status = 0;
  ::waitpid(child, &status, 0);
  std::string reply;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
    reply.append(buf, std::size_t(n));
  ::close(fds[0]);
  if (!reply.starts_with("ok\n")) {
    err << "mtperf atm up: " << (reply.empty() ? "the daemon died before it reported" : reply)
        << "\n";
    return 1;
  }
  const json state = json::parse(reply.substr(3));
  out << "atm testbed " << name << " is up (" << state.value("kind", "?") << ", daemon pid "
      << state.value("pid", 0) << ")\n";
  for (const auto& l : state["links"])
    out << "  " << l.value("controller", "") << ": " << l.value("near_if", "") << " "
        << l.value("near_addr", "") << " <-> " << l.value("far_if", "") << " "
        << l.value("far_addr", "") << "\n";
  out << "enter with: ip netns exec " << state.value("near_ns", "") << " ... (client), "
      << "ip netns exec " << state.value("far_ns", "") << " ... (server)\n";
  return 0;
}

std::string drops_text(const json& drops) {
  std::string s;
  for (const auto& [k, v] : drops.items())
    if (v.get<std::uint64_t>() != 0) s += fmt::format(" {} {}", k, v.get<std::uint64_t>());
  return s.empty() ? " none" : s;
}

// One LE client: how its frames went (BUS or data-direct) and its control exchanges.
void print_lec(const json& h, std::ostream& out) {
  out << fmt::format(
      "         LEC lecid {}: sent via BUS {} (unknown unicast {}) data-direct {}; received via "
      "BUS {}; LE_ARP req {} rep {}; flushes {} (timeouts {}); naks {}\n",
      h.value("lecid", 0), h.value("bus_frames", 0ull), h.value("bus_unknown", 0ull),
      h.value("direct_frames", 0ull), h.value("rx_bus", 0ull), h.value("arp_requests", 0ull),
      h.value("arp_replies", 0ull), h.value("flushes", 0ull), h.value("flush_timeouts", 0ull),
      h.value("naks", 0ull));
}

void print_elan(const json& e, std::ostream& out) {
  if (!e.is_object()) return;
  out << fmt::format(
      "    elan: configures {} joins {} (refused {}) LE_ARP answered {} unanswered {} flushes "
      "relayed {}  BUS forwarded {} dropped {}  bad control frames {}\n",
      e.value("configures", 0ull), e.value("joins", 0ull), e.value("join_rejects", 0ull),
      e.value("le_arp_resolved", 0ull), e.value("le_arp_unresolved", 0ull),
      e.value("flushes_relayed", 0ull), e.value("bus_forwarded", 0ull), e.value("bus_drops", 0ull),
      e.value("bad_frames", 0ull));
}

void print_stats(const json& state, const json& stats, std::ostream& out) {
  // The daemon writes its first counters before the state file, but a status read at that
  // moment by an older daemon, or a file being replaced, must not end the command.
  if (!stats.is_object() || !stats.contains("adapters") || !stats["adapters"].is_array()) {
    out << "  counters: none yet (the daemon writes them every second)\n";
    return;
  }
  const double nominal = state.value("rate_cells_per_s", 0.0);
  const json links = state.value("links", json::array());
  for (const auto& a : stats["adapters"]) {
    const std::size_t i = a.value("adapter", std::size_t{0});
    const json l = i < links.size() ? links[i] : json::object();
    const bool lane = state.value("kind", "") == "lane";
    const bool pdu_faults = state.value("atm", json::object())
                                .value("pdu_faults", json::object())
                                .value("active", false);
    out << fmt::format("  adapter {} ({}, cpu {}): {} {} <-> {} {}\n", i, a.value("controller", ""),
                       a.value("cpu", -1), l.value("near_if", "?"), l.value("near_addr", "?"),
                       l.value("far_if", "?"), l.value("far_addr", "?"));
    for (const char* name : {"near_to_far", "far_to_near"}) {
      const json& w = a["lines"][name];
      const double achieved = w.value("achieved_cells_per_s", 0.0);
      out << fmt::format(
          "    line {:<11} cells {:>12} pdus {:>10}  {:>11.0f} cells/s of {:.0f} ({:.2f}%)  "
          "lost {} hec {} unknown-vc {}\n",
          name, w.value("cells_sent", 0ull), w.value("pdus_sent", 0ull), achieved, nominal,
          nominal > 0 ? 100 * achieved / nominal : 0, w.value("lost", 0ull),
          w.value("hec_errors", 0ull), w.value("unknown_vc", 0ull));
      if (pdu_faults)
        out << fmt::format(
            "      after CRC: of {} eligible PDUs corrupted {} ({} bytes) duplicated {} reordered "
            "{} (released in order {})\n",
            w.value("pdu_eligible", 0ull), w.value("corrupted_after_crc", 0ull),
            w.value("corrupted_bytes", 0ull), w.value("duplicated", 0ull),
            w.value("reordered", 0ull), w.value("reorder_released", 0ull));
    }
    for (const char* name : {"near", "far"}) {
      const json& h = a["hosts"][name];
      out << fmt::format("    host {:<4} {} packets in {} out {}  arp req {} rep {} nak {}", name,
                         h.value("ready", false) ? "ready" : "NOT READY",
                         h.value("from_host", 0ull), h.value("to_host", 0ull),
                         h.value("arp_requests", 0ull), h.value("arp_replies", 0ull),
                         h.value("naks", 0ull));
      out << "  drops:" << drops_text(h["drops"]) << "  device queue drops "
          << h.value("device_tx_dropped", 0ull) << "\n";
      if (lane) print_lec(h, out);
    }
    if (lane) print_elan(a["elan"], out);
    for (const auto& v : a.value("vcs", json::array()))
      out << fmt::format(
          "    vc {}/{:<3} {:>6}->{:<6} tx pdus {:>10} cells {:>12}  rx pdus {:>10} cells {:>12}  "
          "hec {} crc {} len {} drops {}\n",
          v.value("vpi", 0), v.value("vci", 0), v.value("from", ""), v.value("to", ""),
          v.value("tx_pdus", 0ull), v.value("tx_cells", 0ull), v.value("rx_pdus", 0ull),
          v.value("rx_cells", 0ull), v.value("hec_errors", 0ull), v.value("crc_errors", 0ull),
          v.value("length_errors", 0ull), v.value("drops", 0ull));
    const json& d = a["driver"];
    out << fmt::format("    device reads {} writes {} write errors {}\n", d.value("reads", 0ull),
                       d.value("writes", 0ull), d.value("write_errors", 0ull));
  }
}

bool alive(int pid) {
  return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM);
}

std::vector<std::string> testbed_names(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string f = it->path().filename().string();
    if (f.starts_with("atm-") && f.ends_with(".json") && !f.ends_with(".stats.json"))
      names.push_back(f.substr(4, f.size() - 9));
  }
  std::sort(names.begin(), names.end());
  return names;
}

int status(const CommandLine& cl, const std::string& dir, std::ostream& out) {
  std::vector<std::string> names =
      cl.has("name") ? std::vector<std::string>{cl.get<std::string>("name")} : testbed_names(dir);
  if (names.empty()) out << "no ATM testbed is up\n";
  for (const auto& name : names) {
    const json state = read_json(state_path(dir, name));
    if (!state.is_object()) {
      out << "no ATM testbed '" << name << "'\n";
      continue;
    }
    const int pid = state.value("pid", 0);
    const json& atm = state["atm"];
    out << fmt::format(
        "atm testbed {}: {}, {} adapter(s), {:.1f} cells/s nominal, MTU {}, {}, daemon pid "
        "{} ({})\n",
        name, state.value("kind", "?"), atm.value("adapters", 0),
        state.value("rate_cells_per_s", 0.0), state.value("mtu", 0),
        state.value("kind", "") == "lane"
            ? fmt::format("max frame {}", atm.value("lane_max_frame", 0))
            : fmt::format("encap {}", atm.value("encap", "?")),
        pid, alive(pid) ? "running" : "NOT RUNNING: `mtperf atm down` removes what it left");
    out << "  hosts: " << state.value("near_ns", "") << " (near), " << state.value("far_ns", "")
        << " (far)\n";
    const json stats = read_json(stats_path(dir, name));
    print_stats(state, stats, out);
    if (stats.is_object() && stats.contains("capture"))
      out << "  " << stats["capture"].get<std::string>() << "\n";
  }
  return 0;
}

int down(const std::string& name, const std::string& dir, std::ostream& out, std::ostream& err) {
  const std::string path = state_path(dir, name);
  const json state = read_json(path);
  if (!state.is_object()) {
    err << "mtperf atm down: no ATM testbed '" << name << "': " << path << " does not exist\n";
    return 1;
  }
  const int pid = state.value("pid", 0);
  if (alive(pid)) {
    ::kill(pid, SIGTERM);
    // The daemon removes its state file last, after its threads, devices and namespaces.
    const auto deadline = std::chrono::steady_clock::now() + kDownTimeout;
    while (fs::exists(path) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (fs::exists(path)) {
      err << "mtperf atm down: daemon " << pid << " did not stop within " << kDownTimeout.count()
          << " s; killing it\n";
      ::kill(pid, SIGKILL);
    }
  }
  for (const auto& ns : remove_testbed(state))
    out << "removed leftover namespace " << ns << "\n";
  std::error_code ec;
  fs::remove(stats_path(dir, name), ec);
  fs::remove(path, ec);
  out << "atm testbed " << name << " is down\n";
  return 0;
}

}  // namespace

int atm_testbed_command(const std::string& sub, const std::vector<std::string>& args,
                        std::ostream& out, std::ostream& err) {
  const CommandSpec spec =
      sub == "up"     ? up_spec()
      : sub == "down" ? spec_with_name("down", "[--name NAME]",
                                       "Stops the daemon of testbed NAME, which removes what it "
                                       "made; removes what a daemon that died left.")
                      : spec_with_name("status", "[--name NAME]",
                                       "Per adapter: lines, hosts, VCs and achieved cells/s beside "
                                       "nominal.");
  int rc = 0;
  const auto cl = read_command_line(spec, args, out, err, rc);
  if (!cl) return rc;
  const std::string name = cl->vm.count("name") ? cl->get<std::string>("name") : "default";
  const std::string dir = cl->get<std::string>("state-dir");
  try {
    check_testbed_name(name);
  } catch (const std::invalid_argument& e) {
    return usage_error(spec, err, "option " + cl->typed("name") + ": " + e.what());
  }
  try {
    if (sub == "up") return up(*cl, name, dir, out, err);
    if (sub == "down") return down(name, dir, out, err);
    return status(*cl, dir, out);
  } catch (const UsageError& e) {
    return usage_error(spec, err, e.what());
  } catch (const std::exception& e) {
    err << "mtperf atm " << sub << ": " << e.what() << "\n";
    return 1;
  }
}

}  // namespace mtperf::atm
