#pragma once
// The emulated ATM line as the line hook of clip and lane (transports/api/line.hpp): a testbed
// (atmlink/emu/testbed.hpp) built for a run in this process, or the one `mtperf atm up
// --name NAME` keeps up (its state file, atm_state_path()); and the family's own command,
// `mtperf atm up|down|status|cells|decode`.
//
// Line options: "rate" (--atm-rate: oc3 | oc12 | cells/s; default oc12) and "mtu" (--atm-mtu:
// 68..65527; default 9180 for CLIP, the maximum frame's for LANE). Thread-safety: stateless.
#include "transports/api/line.hpp"

namespace mtperf::atm {

const LineHook& atm_line_hook();

}  // namespace mtperf::atm
