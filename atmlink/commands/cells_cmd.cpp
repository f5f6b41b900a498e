#include "atmlink/commands/cells_cmd.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <istream>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "atmlink/pdu_tool.hpp"
#include "platform/command_line.hpp"
#include "platform/number.hpp"

namespace mtperf::atm {
namespace {

using cli::CommandLine;
using cli::CommandSpec;
using cli::read_command_line;
using cli::usage_error;
using cli::UsageError;

using mtperf::atm::Cell;

namespace po = boost::program_options;

constexpr int kDecodeError = 1;

// --encap, --nni and --max-frame, which cells and decode share.
void add_common(CommandSpec& spec, const char* encaps) {
  auto add = spec.options.add_options();
  add("encap", po::value<std::string>()->value_name("ENCAP"), encaps);
  add("nni", po::bool_switch(), "NNI cell headers (12-bit VPI) instead of UNI (8-bit)");
  add("max-frame", po::value<std::string>()->value_name("BYTES"),
      "LANE maximum frame, 1516 | 4544 | 9234 | 18190 (default 1516)");
}

CommandSpec cells_command_spec() {
  CommandSpec spec("atm cells",
                   "--vpi V --vci C --encap llc|vcmux|lane [--lecid N] [--ethertype 0xNNNN] "
                   "[--nni] [--max-frame N] --hex PAYLOAD",
                   "Prints the cells of one AAL5 PDU carrying PAYLOAD, one 53-byte cell per line "
                   "in hex.");
  auto add = spec.options.add_options();
  add("vpi", po::value<std::string>()->value_name("V"),
      "virtual path, 0..255 (UNI) or 0..4095 (NNI), decimal or 0x hex; required");
  add("vci", po::value<std::string>()->value_name("C"),
      "virtual channel, 32..65535 (0..31 are reserved), decimal or 0x hex; required");
  add_common(spec,
             "llc (RFC 2684 LLC/SNAP) | vcmux (VC multiplexing) | lane (LAN Emulation); "
             "required");
  add("lecid", po::value<std::string>()->value_name("N"),
      "--encap lane: the LE client ID, 0x0001..0xFEFF (default 1)");
  add("ethertype", po::value<std::string>()->value_name("0xNNNN"),
      "EtherType in the LLC/SNAP header (default: from the payload's IP version nibble, 0x86dd for "
      "6, "
      "else 0x0800)");
  add("hex", po::value<std::string>()->value_name("PAYLOAD"),
      "the PDU's payload in hex digits (spaces and colons ignored); required");
  return spec;
}

CommandSpec decode_command_spec() {
  CommandSpec spec("atm decode", "[--encap auto|llc|vcmux|lane] [--nni] [--max-frame N] < cells",
                   "Reads cells, one per line in hex ('#' comments and blank lines skipped), and "
                   "prints each PDU or the first error with its cell number.");
  add_common(spec, "auto | llc | vcmux | lane (default auto: told by each PDU's first bytes)");
  return spec;
}

std::uint64_t parse_number(const std::string& option, const std::string& text, std::uint64_t max) {
  const std::optional<std::uint64_t> value = parse_whole_or_hex(text, 0, max);
  if (!value)
    throw UsageError(option + ": '" + text + "' is not a number in 0.." + std::to_string(max));
  return *value;
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
  return fmt::format("{:02x}", fmt::join(bytes, ""));
}

std::string hex16(std::uint16_t v) {
  return fmt::format("0x{:04x}", v);
}

std::size_t max_frame_option(const CommandLine& cl) {
  return cl.has("max-frame")
             ? parse_number(cl.typed("max-frame"), cl.get<std::string>("max-frame"), 18190)
             : 1516;
}

atm::Encap encap_option(const CommandLine& cl) {
  try {
    return atm::parse_encap(cl.get<std::string>("encap"));
  } catch (const std::invalid_argument& e) {
    throw UsageError(cl.typed("encap") + ": " + e.what());
  }
}

atm::PduCellsSpec cells_spec(const CommandLine& cl) {
  for (const char* required : {"vpi", "vci", "encap", "hex"}) {
    if (!cl.has(required)) throw UsageError(std::string("missing --") + required);
  }
  const auto number = [&](const char* name, std::uint64_t max) {
    return static_cast<std::uint16_t>(parse_number(cl.typed(name), cl.get<std::string>(name), max));
  };
  atm::PduCellsSpec spec;
  spec.format = cl.get<bool>("nni") ? atm::HeaderFormat::kNni : atm::HeaderFormat::kUni;
  spec.vc.vpi = number("vpi", spec.format == atm::HeaderFormat::kUni ? 255 : 4095);
  spec.vc.vci = number("vci", 65535);
  spec.encap = encap_option(cl);
  if (cl.has("lecid")) {
    if (spec.encap != atm::Encap::kLane)
      throw UsageError(cl.typed("lecid") + " applies to --encap lane only");
    spec.lecid = number("lecid", 65535);
  }
  if (cl.has("ethertype")) spec.ethertype = number("ethertype", 65535);
  spec.lane_max_frame = max_frame_option(cl);
  return spec;
}

}  // namespace

int atm_cells_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const CommandSpec spec = cells_command_spec();
  int rc = 0;
  const auto cl = read_command_line(spec, args, out, err, rc);
  if (!cl) return rc;
  try {
    const atm::PduCellsSpec cells = cells_spec(*cl);
    std::string why;
    const auto payload = parse_hex(cl->get<std::string>("hex"), why);
    if (!payload) throw UsageError(cl->typed("hex") + ": " + why);
    for (const Cell& cell : atm::make_pdu_cells(cells, *payload))
      out << to_hex(cell) << "\n";
    return 0;
  } catch (const UsageError& e) {
    return usage_error(spec, err, e.what());
  } catch (const std::invalid_argument& e) {  // make_pdu_cells: what the spec cannot carry
    return usage_error(spec, err, e.what());
  }
}

int atm_decode_command(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                       std::ostream& err) {
  const CommandSpec spec = decode_command_spec();
  int rc = 0;
  const auto cl = read_command_line(spec, args, out, err, rc);
  if (!cl) return rc;
  atm::DecodeOptions options;
  try {
    options.format = cl->get<bool>("nni") ? atm::HeaderFormat::kNni : atm::HeaderFormat::kUni;
    if (cl->has("encap") && cl->get<std::string>("encap") != "auto")
      options.encap = encap_option(*cl);
    options.lane_max_frame = max_frame_option(*cl);
  } catch (const UsageError& e) {
    return usage_error(spec, err, e.what());
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

}  // namespace mtperf::atm
