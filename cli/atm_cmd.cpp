#include "cli/atm_cmd.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <istream>
#include <map>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string_view>

#include "transports/atm/pdu_tool.hpp"

namespace mtperf::cli {
namespace {

using mtperf::atm::Cell;

constexpr int kUsageError = 2;
constexpr int kDecodeError = 1;

constexpr const char* kCellsUsage =
    "usage: mtperf atm cells --vpi V --vci C --encap llc|vcmux|lane [--lecid N] "
    "[--ethertype 0xNNNN] [--nni] [--max-frame 1516|4544|9234|18190] --hex PAYLOAD\n";
constexpr const char* kDecodeUsage =
    "usage: mtperf atm decode [--encap auto|llc|vcmux|lane] [--nni] [--max-frame N] < cells\n";

struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Splits "--name value" and "--name=value"; flags take no value.
std::map<std::string, std::string> parse_options(const std::vector<std::string>& args,
                                                 const std::vector<std::string>& valued,
                                                 const std::vector<std::string>& flags) {
  std::map<std::string, std::string> options;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    std::optional<std::string> value;
    if (const auto eq = name.find('='); name.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    const bool is_valued = std::find(valued.begin(), valued.end(), name) != valued.end();
    const bool is_flag = std::find(flags.begin(), flags.end(), name) != flags.end();
    if (!is_valued && !is_flag) throw UsageError("unknown option '" + name + "'");
    if (is_flag && value) throw UsageError(name + " takes no value");
    if (is_valued && !value) {
      if (i + 1 >= args.size()) throw UsageError(name + " needs a value");
      value = args[++i];
    }
    if (options.contains(name)) throw UsageError(name + " given twice");
    options[name] = value.value_or("");
  }
  return options;
}

std::uint64_t parse_number(const std::string& option, const std::string& text, std::uint64_t max) {
  const bool hex = text.rfind("0x", 0) == 0 || text.rfind("0X", 0) == 0;
  const char* begin = text.data() + (hex ? 2 : 0);
  const char* end = text.data() + text.size();
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(begin, end, value, hex ? 16 : 10);
  if (begin == end || ec != std::errc{} || ptr != end || value > max) {
    throw UsageError(option + ": '" + text + "' is not a number in 0.." + std::to_string(max));
  }
  return value;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Hex digits to bytes, ignoring spaces and colons; nullopt with a reason on bad input.
std::optional<std::vector<std::uint8_t>> parse_hex(std::string_view text, std::string& why) {
  std::vector<std::uint8_t> bytes;
  int high = -1;
  for (const char c : text) {
    if (c == ' ' || c == '\t' || c == ':' || c == '\r') continue;
    const int d = hex_digit(c);
    if (d < 0) {
      why = std::string("'") + c + "' is not a hex digit";
      return std::nullopt;
    }
    if (high < 0) {
      high = d;
    } else {
      bytes.push_back(static_cast<std::uint8_t>(high << 4 | d));
      high = -1;
    }
  }
  if (high >= 0) {
    why = "odd number of hex digits";
    return std::nullopt;
  }
  return bytes;
}

std::string to_hex(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (const std::uint8_t b : bytes) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 0xF]);
  }
  return s;
}

std::string hex16(std::uint16_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s = "0x";
  for (int shift = 12; shift >= 0; shift -= 4)
    s.push_back(kDigits[(v >> shift) & 0xF]);
  return s;
}

std::size_t max_frame_option(const std::map<std::string, std::string>& o) {
  const auto it = o.find("--max-frame");
  return it == o.end() ? 1516 : parse_number("--max-frame", it->second, 18190);
}

atm::PduCellsSpec cells_spec(const std::map<std::string, std::string>& o) {
  for (const char* required : {"--vpi", "--vci", "--encap", "--hex"}) {
    if (!o.contains(required)) throw UsageError(std::string("missing ") + required);
  }
  atm::PduCellsSpec spec;
  spec.format = o.contains("--nni") ? atm::HeaderFormat::kNni : atm::HeaderFormat::kUni;
  const std::uint64_t max_vpi = spec.format == atm::HeaderFormat::kUni ? 255 : 4095;
  spec.vc.vpi = static_cast<std::uint16_t>(parse_number("--vpi", o.at("--vpi"), max_vpi));
  spec.vc.vci = static_cast<std::uint16_t>(parse_number("--vci", o.at("--vci"), 65535));
  try {
    spec.encap = atm::parse_encap(o.at("--encap"));
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--encap: ") + e.what());
  }
  if (o.contains("--lecid")) {
    if (spec.encap != atm::Encap::kLane) throw UsageError("--lecid applies to --encap lane only");
    spec.lecid = static_cast<std::uint16_t>(parse_number("--lecid", o.at("--lecid"), 65535));
  }
  if (o.contains("--ethertype")) {
    spec.ethertype =
        static_cast<std::uint16_t>(parse_number("--ethertype", o.at("--ethertype"), 65535));
  }
  spec.lane_max_frame = max_frame_option(o);
  return spec;
}

int usage_error(std::ostream& err, const char* command, const char* usage, const char* what) {
  err << "mtperf atm " << command << ": " << what << "\n" << usage;
  return kUsageError;
}

}  // namespace

int atm_cells_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    const auto o = parse_options(
        args, {"--vpi", "--vci", "--encap", "--lecid", "--ethertype", "--max-frame", "--hex"},
        {"--nni", "--help", "-h"});
    if (o.contains("--help") || o.contains("-h")) {
      out << kCellsUsage;
      return 0;
    }
    const atm::PduCellsSpec spec = cells_spec(o);
    std::string why;
    const auto payload = parse_hex(o.at("--hex"), why);
    if (!payload) throw UsageError("--hex: " + why);
    for (const Cell& cell : atm::make_pdu_cells(spec, *payload))
      out << to_hex(cell) << "\n";
    return 0;
  } catch (const std::invalid_argument& e) {
    return usage_error(err, "cells", kCellsUsage, e.what());
  }
}

int atm_decode_command(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                       std::ostream& err) {
  atm::DecodeOptions options;
  try {
    const auto o = parse_options(args, {"--encap", "--max-frame"}, {"--nni", "--help", "-h"});
    if (o.contains("--help") || o.contains("-h")) {
      out << kDecodeUsage;
      return 0;
    }
    options.format = o.contains("--nni") ? atm::HeaderFormat::kNni : atm::HeaderFormat::kUni;
    if (o.contains("--encap") && o.at("--encap") != "auto") {
      try {
        options.encap = atm::parse_encap(o.at("--encap"));
      } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--encap: ") + e.what());
      }
    }
    options.lane_max_frame = max_frame_option(o);
  } catch (const std::invalid_argument& e) {
    return usage_error(err, "decode", kDecodeUsage, e.what());
  }

  std::vector<Cell> cells;
  std::string line;
  for (std::size_t line_no = 1; std::getline(in, line); ++line_no) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    std::string why;
    const auto bytes = parse_hex(line, why);
    if (bytes && bytes->size() != atm::kCellBytes) {
      why = "expected 106 hex digits (one 53-byte cell), got " + std::to_string(bytes->size() * 2);
    }
    if (!why.empty()) {
      err << "mtperf atm decode: cell " << cells.size() + 1 << " (line " << line_no << "): " << why
          << "\n";
      return kDecodeError;
    }
    Cell& cell = cells.emplace_back();
    std::copy(bytes->begin(), bytes->end(), cell.begin());
  }

  const atm::CellStreamResult result = atm::decode_cell_stream(cells, options);
  for (std::size_t i = 0; i < result.pdus.size(); ++i) {
    const atm::DecodedPdu& p = result.pdus[i];
    out << "pdu " << i + 1 << ": vpi " << p.vc.vpi << " vci " << p.vc.vci << " encap "
        << atm::to_string(p.encap);
    if (p.encap == atm::Encap::kLane) out << " lecid " << p.lecid;
    if (p.encap != atm::Encap::kVcMux) out << " ethertype " << hex16(p.ethertype);
    out << " cells " << p.first_cell << ".." << p.first_cell + p.cells - 1 << " bytes "
        << p.payload.size() << "\n"
        << to_hex(p.payload) << "\n";
  }
  if (result.error) {
    err << "mtperf atm decode: cell " << result.error->cell << ": " << result.error->what << "\n";
    return kDecodeError;
  }
  return 0;
}

}  // namespace mtperf::cli
