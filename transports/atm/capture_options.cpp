#include "transports/atm/capture_options.hpp"

#include <stdexcept>

#include "platform/request_error.hpp"

namespace mtperf::atm {

std::vector<OptionInfo> capture_option_list() {
  OptionInfo file{"capture", "",
                  "a pcapng file of what crossed each emulated line (one "
                  "interface per line; Wireshark and tshark read it)"};
  return {
      file,
      choice_option("capture_format", {"sunatm", "erf-aal5", "erf-cells"}, "sunatm",
                    "sunatm: PDUs without pad and trailer; erf-aal5: whole CPCS-PDUs with their "
                    "CRC as received; erf-cells: every cell that arrived"),
      whole_option("capture_snap", 0, kMaxCaptureSnap, "0",
                   "bytes kept of each record (64 at least; 0: all)"),
      size_option("capture_max", 4096, std::uint64_t(1) << 40, "100M",
                  "the capture file's size at most; capturing stops there"),
  };
}

CaptureOptions capture_options_of(std::string_view transport, const LineOptions& options) {
  TransportParams params;
  for (const auto& [key, value] : options)
    if (key.starts_with("capture")) params[key] = value;
  CaptureOptions c;
  if (params.empty()) return c;
  try {
    const std::vector<OptionInfo> list = capture_option_list();
    const OptionValues v = parse_options(transport, list, params);
    c.path = v.text("capture");
    if (c.path.empty())
      throw std::invalid_argument("option capture: give the file to write, -O capture=FILE");
    c.format = parse_capture_format(v.text("capture_format"));
    c.snap = std::uint32_t(v.number("capture_snap"));
    if (c.snap != 0 && c.snap < 64)
      throw std::invalid_argument("option capture_snap: " + std::to_string(c.snap) +
                                  " is below 64 (0 keeps whole records)");
    c.max_bytes = v.number("capture_max");
  } catch (const std::invalid_argument& e) {
    throw RequestError(std::string("-O: ") + e.what());
  }
  return c;
}

}  // namespace mtperf::atm
