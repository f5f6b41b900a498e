#include "control/listen.hpp"

#include <stdexcept>

#include "platform/number.hpp"

namespace mtperf::control {

void parse_listen(const std::string& text, const std::string& default_bind, std::string& bind,
                  uint16_t& port) {
  std::string host = default_bind, digits = text;
  const size_t colon = text.rfind(':');
  if (colon != std::string::npos) {
    host = text.substr(0, colon);
    digits = text.substr(colon + 1);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
      host = host.substr(1, host.size() - 2);
    if (host.empty()) throw std::invalid_argument("'" + text + "': no address before the ':'");
  }
  const auto p = parse_whole(digits, 0, 65535);
  if (!p) throw std::invalid_argument("'" + text + "': the port must be a number 0..65535");
  bind = host;
  port = uint16_t(*p);
}

}  // namespace mtperf::control
