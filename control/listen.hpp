#pragma once
// The address of an extra listener of `mtperf serve` (--iperf3, --sockperf): "PORT",
// "ADDRESS:PORT" or "[V6]:PORT".
#include <cstdint>
#include <string>

namespace mtperf::control {

// The bind address (`default_bind` when only a port is given) and the port, 0..65535. Throws
// std::invalid_argument naming the text.
void parse_listen(const std::string& text, const std::string& default_bind, std::string& bind,
                  uint16_t& port);

}  // namespace mtperf::control
