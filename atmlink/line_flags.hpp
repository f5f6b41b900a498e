#pragma once
// The options of an emulated ATM line, one table that `mtperf run -T clip|lane` (through the
// transports' line hook) and `mtperf atm up` both declare and read, typed as -O keys are
// (platform/typed_options.hpp): --help, the man pages and `mtperf transports` print it.
//   --atm-rate RATE        oc3 | oc12 (oc3c, oc12c) or whole cells/s, 1..100000000
//   --atm-mtu BYTES        the IP MTU, 68..65527, or 0: the mode's own (9180 CLIP, 1500 LANE)
//   --capture FILE, --capture-format, --capture-snap, --capture-max: the capture (capture.hpp),
//                          also taken by run as -O capture*=VALUE (capture_option_list)
// Set-up path only.
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "atmlink/capture.hpp"
#include "atmlink/line.hpp"
#include "platform/typed_options.hpp"

namespace mtperf::atm {

inline constexpr const char* kDefaultLineRate = "oc12";

// The capture's keys as -O takes them: capture, capture_format, capture_snap, capture_max.
std::vector<OptionInfo> capture_option_list();

// Every line flag: atm-rate (key rate), atm-mtu (mtu), then the capture's flags (keys as above).
const std::vector<FlagOption>& atm_line_flags();
// The first two alone: the capture's keys are read with -O's (capture_option_list).
std::span<const FlagOption> atm_rate_and_mtu_flags();

// The line rate and MTU of parsed line flags (mtu 0: the mode's own).
LineRate line_rate_of(const OptionValues& v);
int line_mtu_of(const OptionValues& v);

// The capture of parsed capture keys (path "" when none is asked for). Throws
// std::invalid_argument naming `name(key)` for a companion without a file or a snap below 64.
template <class Name>
CaptureOptions capture_of(const OptionValues& v, Name name) {
  CaptureOptions c;
  c.path = v.text("capture");
  if (c.path.empty()) {
    for (const char* key : {"capture_format", "capture_snap", "capture_max"})
      if (v[key].given) throw std::invalid_argument(name(key) + " needs a capture file");
    return c;
  }
  c.format = parse_capture_format(v.text("capture_format"));
  c.snap = std::uint32_t(v.number("capture_snap"));
  if (c.snap != 0 && c.snap < 64)
    throw std::invalid_argument(name("capture_snap") + ": " + std::to_string(c.snap) +
                                " is below 64 (0 keeps whole records)");
  c.max_bytes = v.number("capture_max");
  return c;
}

}  // namespace mtperf::atm
