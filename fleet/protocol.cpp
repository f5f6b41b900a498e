#include "fleet/protocol.hpp"

#include "control/protocol.hpp"

namespace mtperf::fleet {

std::string join_mac(const std::string& key, const std::string& challenge,
                     const nlohmann::json& member) {
  std::string data = "mtperf fleet join";
  data += '\0';
  data += challenge;
  data += '\0';
  data += member.dump();
  return control::hmac_sha256_hex(key, data);
}

}  // namespace mtperf::fleet
