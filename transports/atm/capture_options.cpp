#include "transports/atm/capture_options.hpp"

#include <stdexcept>

#include "platform/request_error.hpp"

namespace mtperf::atm {

CaptureOptions capture_options_of(std::string_view transport, const LineOptions& options) {
  TransportParams params;
  for (const auto& [key, value] : options)
    if (key.starts_with("capture")) params[key] = value;
  if (params.empty()) return {};
  try {
    const std::vector<OptionInfo> list = capture_option_list();
    const OptionValues v = parse_options(transport, list, params);
    if (v.text("capture").empty())
      throw std::invalid_argument("option capture: give the file to write, -O capture=FILE");
    return capture_of(v, [](const char* key) { return "option " + std::string(key); });
  } catch (const std::invalid_argument& e) {
    throw RequestError(std::string("-O: ") + e.what());
  }
}

}  // namespace mtperf::atm
