#pragma once
// The capture options of -T clip|lane, as -O keys of the transport (atmlink/line_flags.hpp
// declares them, for the line's flags too):
//   -O capture=FILE              a pcapng file of what crossed each emulated line
//   -O capture_format=sunatm     | erf-aal5 (pad, trailer, CRC) | erf-cells (every cell)
//   -O capture_snap=BYTES        bytes kept of each record, 64..262144; 0 (default): all
//   -O capture_max=SIZE          the file's size at most (K/M/G, 1024-based; default 100M);
//                                capturing stops there and the run says so
// Set-up path only.
#include <string_view>
#include <vector>

#include "atmlink/line_flags.hpp"
#include "platform/typed_options.hpp"
#include "transports/api/line.hpp"

namespace mtperf::atm {

// The capture a run asks for, read from the capture keys among `options` (a line's options with
// the transport's -O keys); path "" when none. Throws RequestError naming the -O key as typed.
CaptureOptions capture_options_of(std::string_view transport, const LineOptions& options);

}  // namespace mtperf::atm
