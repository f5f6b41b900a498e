#include "verbs/perftest_wire.hpp"

#include <cstdio>
#include <cstring>

namespace mtperf::perftest {

namespace {

// What the peer sent, printable and bounded, for an error message.
std::string quote(std::span<const uint8_t> b) {
  std::string s = "\"";
  for (size_t i = 0; i < b.size() && i < 120; ++i) {
    uint8_t c = b[i];
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      s += char(c);
    } else {
      char e[8];
      std::snprintf(e, sizeof e, "\\x%02x", c);
      s += e;
    }
  }
  return s + (b.size() > 120 ? "\"..." : "\"");
}

int hex_digit(uint8_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads `width` hex digits at `at` then the separator `sep`; advances `at`.
uint64_t field(std::span<const uint8_t> b, size_t& at, size_t width, char sep, const char* name) {
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i) {
    int d = at + i < b.size() ? hex_digit(b[at + i]) : -1;
    if (d < 0) {
      throw ProtocolError(std::string("perftest's keys: the ") + name + " is not " +
                          std::to_string(width) + " hex digits: " + quote(b));
    }
    v = v << 4 | uint64_t(d);
  }
  at += width;
  if (at >= b.size() || b[at] != uint8_t(sep)) {
    throw ProtocolError(std::string("perftest's keys: no '") + (sep ? std::string(1, sep) : "\\0") +
                        "' after the " + name + ": " + quote(b));
  }
  ++at;
  return v;
}

void put_hex(std::vector<uint8_t>& out, uint64_t v, size_t width) {
  static const char* kHex = "0123456789abcdef";
  for (size_t i = width; i-- > 0;)
    out.push_back(uint8_t(kHex[(v >> (4 * i)) & 15]));
}

}  // namespace

uint32_t parse_version(std::span<const uint8_t> b) {
  if (b.size() != kVersionBytes) throw ProtocolError("perftest's version: not 16 bytes");
  size_t len = 0;
  while (len < b.size() && b[len] != 0)
    ++len;
  if (len == b.size()) throw ProtocolError("perftest's version: no NUL in 16 bytes: " + quote(b));
  std::span<const uint8_t> t = b.first(len);
  size_t at = 0;
  uint32_t major = 0;
  while (at < t.size() && t[at] >= '0' && t[at] <= '9' && at < 3)
    major = major * 10 + (t[at++] - '0');
  size_t frac_at = at + 1;
  if (at == 0 || at >= t.size() || t[at] != '.' || frac_at >= t.size() || t.size() - frac_at > 3) {
    throw ProtocolError("perftest's version is not a number like 6.06: " + quote(t));
  }
  uint32_t frac = 0, scale = 100;
  for (size_t i = frac_at; i < t.size(); ++i, scale /= 10) {
    if (t[i] < '0' || t[i] > '9') {
      throw ProtocolError("perftest's version is not a number like 6.06: " + quote(t));
    }
    frac += uint32_t(t[i] - '0') * scale;
  }
  return major * 1000 + frac;
}

std::array<uint8_t, kVersionBytes> encode_version(std::string_view v) {
  std::array<uint8_t, kVersionBytes> out{};
  for (size_t i = 0; i < v.size() && i + 1 < out.size(); ++i)
    out[i] = uint8_t(v[i]);
  return out;
}

std::vector<uint8_t> encode_keys(const Keys& k, bool with_gid) {
  std::vector<uint8_t> out;
  out.reserve(kKeyGidBytes);
  put_hex(out, k.lid, 4);
  out.push_back(':');
  put_hex(out, k.out_reads, 4);
  out.push_back(':');
  put_hex(out, k.qpn & 0xffffff, 6);
  out.push_back(':');
  put_hex(out, k.psn & 0xffffff, 6);
  out.push_back(':');
  put_hex(out, k.rkey, 8);
  out.push_back(':');
  put_hex(out, k.vaddr, 16);
  out.push_back(':');
  if (with_gid) {
    for (uint8_t g : k.gid) {
      put_hex(out, g, 2);
      out.push_back(':');
    }
    put_hex(out, k.srqn, 8);
    out.push_back(':');
  } else {
    put_hex(out, k.srqn, 8);
  }
  out.push_back(0);
  return out;
}

Keys decode_keys(std::span<const uint8_t> b, bool with_gid) {
  size_t want = with_gid ? kKeyGidBytes : kKeyBytes;
  if (b.size() != want) {
    throw ProtocolError("perftest's keys: " + std::to_string(b.size()) + " bytes, not " +
                        std::to_string(want));
  }
  Keys k;
  size_t at = 0;
  k.lid = uint16_t(field(b, at, 4, ':', "LID"));
  k.out_reads = uint16_t(field(b, at, 4, ':', "outstanding reads"));
  k.qpn = uint32_t(field(b, at, 6, ':', "QPN"));
  k.psn = uint32_t(field(b, at, 6, ':', "PSN"));
  k.rkey = uint32_t(field(b, at, 8, ':', "RKEY"));
  k.vaddr = field(b, at, 16, ':', "VADDR");
  if (with_gid) {
    for (auto& g : k.gid)
      g = uint8_t(field(b, at, 2, ':', "GID"));
    k.srqn = uint32_t(field(b, at, 8, ':', "SRQN"));
    if (at != b.size() - 1 || b[at] != 0) {
      throw ProtocolError("perftest's keys: no NUL at the end: " + quote(b));
    }
  } else {
    k.srqn = uint32_t(field(b, at, 8, '\0', "SRQN"));
  }
  if (k.qpn < 2) throw ProtocolError("perftest's keys: QPN " + std::to_string(k.qpn));
  return k;
}

bool ipv4_mapped(const std::array<uint8_t, 16>& g) {
  for (size_t i = 0; i < 10; ++i) {
    if (g[i] != 0) return false;
  }
  return g[10] == 0xff && g[11] == 0xff;
}

std::array<uint8_t, kMtuBytes> encode_mtu(uint8_t mtu) {
  return {uint8_t('0' + mtu % 10), 0};
}

uint8_t decode_mtu(std::span<const uint8_t> b) {
  if (b.size() != kMtuBytes || b[0] < '1' || b[0] > '5' || b[1] != 0) {
    throw ProtocolError("perftest's MTU is not 1..5 (256..4096 bytes): " + quote(b));
  }
  return uint8_t(b[0] - '0');
}

std::array<uint8_t, kSysBytes> encode_int(int32_t v) {
  auto u = uint32_t(v);
  return {uint8_t(u >> 24), uint8_t(u >> 16), uint8_t(u >> 8), uint8_t(u)};
}

int32_t decode_int(std::span<const uint8_t> b) {
  if (b.size() != kSysBytes) throw ProtocolError("perftest: not a 4-byte integer");
  return int32_t(uint32_t(b[0]) << 24 | uint32_t(b[1]) << 16 | uint32_t(b[2]) << 8 | b[3]);
}

std::string_view to_string(Program p) {
  switch (p) {
    case Program::send_bw:
      return "send_bw";
    case Program::write_bw:
      return "write_bw";
    case Program::read_bw:
      return "read_bw";
    case Program::send_lat:
      return "send_lat";
    case Program::write_lat:
      return "write_lat";
  }
  return "?";
}

Program parse_program(std::string_view s) {
  for (Program p : {Program::send_bw, Program::write_bw, Program::read_bw, Program::send_lat,
                    Program::write_lat}) {
    if (s == to_string(p)) return p;
  }
  throw ProtocolError("perftest program '" + std::string(s) +
                      "': expected send_bw, write_bw, read_bw, send_lat or write_lat");
}

std::string_view to_string(ClientExchange::Step s) {
  using S = ClientExchange::Step;
  switch (s) {
    case S::version:
      return "version";
    case S::cycle_buffer:
      return "cycle buffer";
    case S::cache_line:
      return "cache line";
    case S::mtu:
      return "MTU";
    case S::keys:
      return "keys";
    case S::rts:
      return "RTS";
    case S::barrier:
      return "barrier";
    case S::data:
      return "data";
    case S::report_size:
      return "report (size)";
    case S::report_iters:
      return "report (iterations)";
    case S::report_peak:
      return "report (peak)";
    case S::report_avg:
      return "report (average)";
    case S::report_rate:
      return "report (message rate)";
    case S::done:
      return "done";
    case S::finished:
      return "finished";
  }
  return "?";
}

namespace {

std::array<uint8_t, 8> encode_u64(uint64_t v) {
  std::array<uint8_t, 8> b{};
  for (int i = 0; i < 8; ++i)
    b[size_t(i)] = uint8_t(v >> (56 - 8 * i));
  return b;
}

uint64_t decode_u64(std::span<const uint8_t> b) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i)
    v = v << 8 | b[i];
  return v;
}

uint64_t bits_of(double d) {
  uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

double double_of(uint64_t u) {
  double d;
  std::memcpy(&d, &u, sizeof d);
  return d;
}

}  // namespace

ClientExchange::ClientExchange(const Config& c) : cfg_(c) {
  using S = Step;
  steps_ = {S::version, S::cycle_buffer, S::cache_line, S::mtu, S::keys};
  switch (c.program) {
    case Program::send_bw:
    case Program::send_lat:
      steps_.insert(steps_.end(),
                    {S::rts, S::barrier, S::barrier, S::barrier, S::data, S::barrier, S::done});
      break;
    case Program::write_bw:
    case Program::read_bw:
      steps_.insert(steps_.end(), {S::rts, S::barrier, S::barrier, S::data, S::barrier,
                                   S::report_size, S::report_iters, S::report_peak, S::report_avg,
                                   S::report_rate, S::barrier, S::done});
      break;
    case Program::write_lat:
      steps_.insert(steps_.end(), {S::keys, S::rts, S::barrier, S::barrier, S::data});
      break;
  }
  steps_.push_back(S::finished);
  prepare();
}

size_t ClientExchange::answer_bytes() const {
  switch (step()) {
    case Step::version:
      return kVersionBytes;
    case Step::cycle_buffer:
    case Step::cache_line:
      return kSysBytes;
    case Step::mtu:
      return kMtuBytes;
    case Step::keys:
    case Step::barrier:
      return cfg_.with_gid ? kKeyGidBytes : kKeyBytes;
    case Step::report_size:
    case Step::report_iters:
    case Step::report_peak:
    case Step::report_avg:
    case Step::report_rate:
      return 8;
    case Step::rts:
    case Step::data:
    case Step::done:
    case Step::finished:
      return 0;
  }
  return 0;
}

void ClientExchange::prepare() {
  out_.clear();
  auto put = [this](const auto& a) { out_.assign(a.begin(), a.end()); };
  const BwReport& r = cfg_.report;
  switch (step()) {
    case Step::version:
      put(encode_version(kOurVersion));
      break;
    case Step::cycle_buffer:
      put(encode_int(cfg_.cycle_buffer));
      break;
    case Step::cache_line:
      put(encode_int(cfg_.cache_line));
      break;
    case Step::mtu:
      put(encode_mtu(cfg_.mtu));
      break;
    case Step::keys:
    case Step::barrier:
      out_ = encode_keys(cfg_.keys, cfg_.with_gid);
      break;
    case Step::report_size:
      put(encode_u64(r.size));
      break;
    case Step::report_iters:
      put(encode_u64(r.iters));
      break;
    case Step::report_peak:
      put(encode_u64(bits_of(r.bw_peak)));
      break;
    case Step::report_avg:
      put(encode_u64(bits_of(r.bw_avg)));
      break;
    case Step::report_rate:
      put(encode_u64(bits_of(r.msg_rate)));
      break;
    case Step::done:
      out_ = {'d', 'o', 'n', 'e', 0};
      break;
    case Step::rts:
    case Step::data:
    case Step::finished:
      break;
  }
}

void ClientExchange::proceed() {
  if (step() != Step::rts && step() != Step::data && step() != Step::done) {
    throw ProtocolError("perftest's exchange: proceed() at the " + std::string(to_string(step())) +
                        " step");
  }
  ++at_;
  prepare();
}

void ClientExchange::set_report(const BwReport& r) {
  cfg_.report = r;
  prepare();
}

namespace {

// A value perftest sent, within 1..hi; `range` names the range in the error.
int32_t in_range(int32_t v, int32_t hi, const char* what, const char* range) {
  if (v < 1 || v > hi) {
    throw ProtocolError("perftest's " + std::string(what) + " " + std::to_string(v) +
                        " is out of range (" + range + ")");
  }
  return v;
}

}  // namespace

void ClientExchange::take_version(std::span<const uint8_t> a) {
  peer_version_ = parse_version(a);
  size_t len = 0;
  while (len < a.size() && a[len] != 0)
    ++len;
  peer_version_text_.assign(a.begin(), a.begin() + long(len));
  if (peer_version_ < kOldestVersion) {
    throw ProtocolError("perftest says version " + peer_version_text_ +
                        "; its own rule refuses peers older than 5.70 (this client claims " +
                        std::string(kOurVersion) + ")");
  }
}

void ClientExchange::take_keys(std::span<const uint8_t> a) {
  peer_keys_ = decode_keys(a, cfg_.with_gid);
  if (cfg_.with_gid && ipv4_mapped(peer_keys_.gid) != ipv4_mapped(cfg_.keys.gid)) {
    throw ProtocolError(
        "perftest's GID and ours are of different address families (one IPv4-mapped): "
        "start it with a -x GID index of the same family");
  }
}

// An answer is read at this step, and `a` is all of it.
void ClientExchange::check_answer(std::span<const uint8_t> a) const {
  if (answer_bytes() == 0) {
    throw ProtocolError("perftest's exchange: no answer is read at the " +
                        std::string(to_string(step())) + " step");
  }
  if (a.size() != answer_bytes()) {
    throw ProtocolError("perftest's " + std::string(to_string(step())) + ": " +
                        std::to_string(a.size()) + " bytes, not " + std::to_string(answer_bytes()));
  }
}

void ClientExchange::take(std::span<const uint8_t> a) {
  check_answer(a);
  switch (step()) {
    case Step::version:
      take_version(a);
      break;
    case Step::cycle_buffer:
      cycle_buffer_ = std::max(in_range(decode_int(a), 1 << 24, "cycle buffer", "1..16 MiB"),
                               cfg_.cycle_buffer);
      break;
    case Step::cache_line:
      cache_line_ =
          std::max(in_range(decode_int(a), 4096, "cache line", "1..4096 bytes"), cfg_.cache_line);
      break;
    case Step::mtu:
      mtu_ = std::min(decode_mtu(a), cfg_.mtu);
      break;
    case Step::keys:
      take_keys(a);
      break;
    case Step::barrier:
      decode_keys(a, cfg_.with_gid);  // the keys again: only checked
      break;
    case Step::report_size:
      peer_report_.size = decode_u64(a);
      break;
    case Step::report_iters:
      peer_report_.iters = decode_u64(a);
      break;
    case Step::report_peak:
      peer_report_.bw_peak = double_of(decode_u64(a));
      break;
    case Step::report_avg:
      peer_report_.bw_avg = double_of(decode_u64(a));
      break;
    case Step::report_rate:
      peer_report_.msg_rate = double_of(decode_u64(a));
      break;
    case Step::rts:
    case Step::data:
    case Step::done:
    case Step::finished:
      break;
  }
  ++at_;
  prepare();
}

std::string server_command(Program program, uint64_t iterations, uint32_t size, int gid_index,
                           int tx_depth) {
  std::string s = "ib_" + std::string(to_string(program)) + " -n " + std::to_string(iterations) +
                  " -s " + std::to_string(size);
  if (tx_depth > 0) s += " -t " + std::to_string(tx_depth);
  if (gid_index >= 0) s += " -x " + std::to_string(gid_index);
  return s + " -F";
}

}  // namespace mtperf::perftest
