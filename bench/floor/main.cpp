// floor: one mtperf workload as a bare system-call loop over loopback; prints one JSON line.
//
//   floor -w WORKLOAD [-e ENGINE] [-P FLOWS] [-l SECONDS] [-W WARMUP] [-m BYTES]
//         [-r REQ[,RESP]] [-c CPU] [-s CPU]
//
// WORKLOAD: stream | maerts | bidir | rr | udp_rr | crr. ENGINE (-e, --engine): socket, the
// blocking socket calls of `-T socket` (default), or uring, the ring operations of `-T uring`
// (stream, maerts and rr). -P (--flows) is the number of rr flows with -e uring, all on one
// thread each side, as `-T uring -w rr -P N --threads 1` (1). -m is the stream send size (64K);
// -r the rr/crr request and response sizes (1,1); sizes take K and M (1024-based). -c and -s
// pin the client's and the server's threads (0 and 1; -1: unpinned). The line carries the same
// keys as mtperf's JSON summary: throughput_bps for streams (bidir: both directions),
// transaction_rate for rr and crr (all flows), and window_s.
#include <getopt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "bench/floor/floor.hpp"

namespace {

using mtperf::floors::Engine;
using mtperf::floors::Options;
using mtperf::floors::Workload;

constexpr uint32_t kMaxFlows = 16384;  // both sides in one process: two descriptors a flow

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "floor: %s\nusage: floor -w stream|maerts|bidir|rr|udp_rr|crr [-e socket|uring] "
               "[-P FLOWS] [-l SECONDS] [-W WARMUP] [-m BYTES] [-r REQ[,RESP]] [-c CPU] "
               "[-s CPU]\n",
               why);
  std::exit(2);
}

uint32_t parse_size(const std::string& text) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str()) usage(("bad size '" + text + "'").c_str());
  if (*end == 'K' || *end == 'k') v <<= 10, ++end;
  if (*end == 'M' || *end == 'm') v <<= 20, ++end;
  if (*end != '\0' || v == 0 || v > (64u << 20)) usage(("bad size '" + text + "'").c_str());
  return uint32_t(v);
}

double parse_seconds(const char* text) {
  char* end = nullptr;
  double v = std::strtod(text, &end);
  if (*end != '\0' || !(v >= 0 && v <= 3600)) usage("bad number of seconds");
  return v;
}

Workload parse_workload(const std::string& w) {
  if (w == "stream") return Workload::stream;
  if (w == "maerts") return Workload::maerts;
  if (w == "bidir") return Workload::bidir;
  if (w == "rr") return Workload::rr;
  if (w == "udp_rr") return Workload::udp_rr;
  if (w == "crr") return Workload::crr;
  usage(("unknown workload '" + w + "'").c_str());
}

Engine parse_engine(const std::string& e) {
  if (e == "socket") return Engine::socket;
  if (e == "uring") return Engine::uring;
  usage(("unknown engine '" + e + "'").c_str());
}

// What the engine's floor covers.
void check(const Options& o) {
  bool rr = o.workload == Workload::rr;
  if (o.engine == Engine::socket && o.flows != 1) usage("-P needs -e uring");
  if (o.engine == Engine::uring && !rr && o.workload != Workload::stream &&
      o.workload != Workload::maerts) {
    usage("-e uring runs stream, maerts and rr");
  }
  if (!rr && o.flows != 1) usage("-P is for rr");
}

Options parse(int argc, char** argv) {
  static const option kLong[] = {
      {"engine", required_argument, nullptr, 'e'},
      {"flows", required_argument, nullptr, 'P'},
      {nullptr, 0, nullptr, 0},
  };
  Options o;
  std::string name;
  int opt;
  while ((opt = getopt_long(argc, argv, "w:e:P:l:W:m:r:c:s:", kLong, nullptr)) != -1) {
    std::string a = optarg ? optarg : "";
    switch (opt) {
      case 'w':
        o.workload = parse_workload(a);
        break;
      case 'e':
        o.engine = parse_engine(a);
        break;
      case 'P': {
        char* end = nullptr;
        unsigned long n = std::strtoul(optarg, &end, 10);
        if (*end != '\0' || n < 1 || n > kMaxFlows) usage("bad number of flows (1..16384)");
        o.flows = uint32_t(n);
        break;
      }
      case 'l':
        o.seconds = parse_seconds(optarg);
        break;
      case 'W':
        o.warmup = parse_seconds(optarg);
        break;
      case 'm':
        o.msg_size = parse_size(a);
        break;
      case 'r': {
        auto comma = a.find(',');
        o.req_size = parse_size(a.substr(0, comma));
        o.resp_size = comma == std::string::npos ? o.req_size : parse_size(a.substr(comma + 1));
        break;
      }
      case 'c':
      case 's': {
        int cpu = std::atoi(optarg);
        if (cpu < -1 || cpu > 4095) usage("bad CPU");
        (opt == 'c' ? o.client_cpu : o.server_cpu) = cpu;
        break;
      }
      default:
        usage("bad option");
    }
  }
  if (optind != argc) usage("unexpected argument");
  if (o.seconds <= 0) usage("-l must be above 0");
  check(o);
  return o;
}

const char* name_of(Workload w) {
  switch (w) {
    case Workload::stream:
      return "stream";
    case Workload::maerts:
      return "maerts";
    case Workload::bidir:
      return "bidir";
    case Workload::rr:
      return "rr";
    case Workload::udp_rr:
      return "udp_rr";
    case Workload::crr:
      return "crr";
  }
  return "?";
}

const char* name_of(Engine e) {
  switch (e) {
    case Engine::socket:
      return "socket";
    case Engine::uring:
      return "uring";
  }
  return "?";
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  try {
    auto r = mtperf::floors::run(o);
    if (r.error != 0) {
      std::fprintf(stderr, "floor: the client stopped before the end: %s\n",
                   std::strerror(r.error));
      return 1;
    }
    bool stream = o.workload == Workload::stream || o.workload == Workload::maerts ||
                  o.workload == Workload::bidir;
    double rate = r.window_s > 0 ? double(r.units) / r.window_s : 0;
    std::printf(
        "{\"floor\":\"%s\",\"engine\":\"%s\",\"flows\":%u,\"message_size\":%u,"
        "\"req_size\":%u,\"resp_size\":%u,\"nodelay\":%s,\"client_cpu\":%d,"
        "\"server_cpu\":%d,\"window_s\":%.6f,\"throughput_bps\":%.1f,"
        "\"transaction_rate\":%.1f}\n",
        name_of(o.workload), name_of(o.engine), o.flows, o.msg_size, o.req_size, o.resp_size,
        o.nodelay() ? "true" : "false", o.client_cpu, o.server_cpu, r.window_s,
        stream ? rate * 8 : 0.0, stream ? 0.0 : rate);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "floor: %s\n", e.what());
    return 1;
  }
  return 0;
}
