#pragma once
// `mtperf atm cells` and `mtperf atm decode`: ATM cells on demand, for driver validation.
//
//   cells --vpi V --vci C --encap llc|vcmux|lane [--lecid N] [--ethertype 0xNNNN] [--nni]
//         [--max-frame 1516|4544|9234|18190] --hex PAYLOAD
//     prints the cells of one AAL5 PDU carrying PAYLOAD, one 53-byte cell per line in
//     lowercase hex (106 digits).
//   decode [--encap auto|llc|vcmux|lane] [--nni] [--max-frame N]
//     reads such lines (blank lines and '#' comments skipped, spaces ignored) and prints each
//     PDU's VPI/VCI, encapsulation and payload in hex, or the first error with its cell number.
//
// args are the words after the subcommand name. Exit status: 0 success, 1 the cells did not
// decode, 2 bad usage (the message names the option).
#include <iosfwd>
#include <string>
#include <vector>

namespace mtperf::atm {

int atm_cells_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int atm_decode_command(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                       std::ostream& err);

}  // namespace mtperf::atm
