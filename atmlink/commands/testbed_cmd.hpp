#pragma once
// `mtperf atm up|down|status`: an emulated ATM testbed that outlives the command.
//
//   up --mode clip|lane --adapters N --rate oc3|oc12|CELLS --mtu M [--name NAME] [--cpus LIST]
//      [--encap llc|vcmux] [--inatmarp] [--max-frame 1516|4544|9234|18190] [--delay-us D]
//      [--cell-loss P] [--hec-errors P] [--ber P] [--seed S]
//      [--corrupt-after-crc P|every:N] [--duplicate P|every:N] [--reorder P|every:N]
//      [--fault-dir both|near-to-far|far-to-near] [--fault-proto any|tcp|udp]
//      [--fault-min-payload BYTES]
//     forks a daemon that builds the testbed (two namespaces, N adapter pairs, one emulator
//     thread each), writes /run/mtperf/atm-NAME.json (the state, TestHosts fields included, and
//     the daemon's pid) and rewrites /run/mtperf/atm-NAME.stats.json every second; returns once
//     the hosts have registered (CLIP) or joined (LANE), or with the daemon's error.
//   status [--name NAME]   per adapter: lines, hosts, VCs, achieved cells/s beside nominal.
//   down [--name NAME]     stops the daemon, which removes what it made; removes leftovers of
//                          a daemon that died.
// Exit status: 0 ok, 1 failure, 2 bad usage.
#include <iosfwd>
#include <string>
#include <vector>

namespace mtperf::atm {

int atm_testbed_command(const std::string& sub, const std::vector<std::string>& args,
                        std::ostream& out, std::ostream& err);

}  // namespace mtperf::atm
