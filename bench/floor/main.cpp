// floor: one mtperf workload as a bare system-call loop over loopback; prints one JSON line.
//
//   floor -w WORKLOAD [-l SECONDS] [-W WARMUP] [-m BYTES] [-r REQ[,RESP]] [-c CPU] [-s CPU]
//
// WORKLOAD: stream | maerts | bidir | rr | udp_rr | crr. -m is the stream send size (64K);
// -r the rr/crr request and response sizes (1,1); sizes take K and M (1024-based). -c and -s
// pin the client's and the server's threads (0 and 1; -1: unpinned). The line carries the same
// keys as mtperf's JSON summary: throughput_bps for streams (bidir: both directions),
// transaction_rate for rr and crr, and window_s.
#include <getopt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "bench/floor/floor.hpp"

namespace {

using mtperf::floors::Options;
using mtperf::floors::Workload;

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "floor: %s\nusage: floor -w stream|maerts|bidir|rr|udp_rr|crr [-l SECONDS] "
               "[-W WARMUP] [-m BYTES] [-r REQ[,RESP]] [-c CPU] [-s CPU]\n",
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

Options parse(int argc, char** argv) {
  Options o;
  std::string name;
  int opt;
  while ((opt = getopt(argc, argv, "w:l:W:m:r:c:s:")) != -1) {
    std::string a = optarg ? optarg : "";
    switch (opt) {
      case 'w':
        o.workload = parse_workload(a);
        break;
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
        "{\"floor\":\"%s\",\"message_size\":%u,\"req_size\":%u,\"resp_size\":%u,"
        "\"nodelay\":%s,\"client_cpu\":%d,\"server_cpu\":%d,\"window_s\":%.6f,"
        "\"throughput_bps\":%.1f,\"transaction_rate\":%.1f}\n",
        name_of(o.workload), o.msg_size, o.req_size, o.resp_size, o.nodelay() ? "true" : "false",
        o.client_cpu, o.server_cpu, r.window_s, stream ? rate * 8 : 0.0, stream ? 0.0 : rate);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "floor: %s\n", e.what());
    return 1;
  }
  return 0;
}
