// The clip and lane registry entries: the socket transport, probed for what the emulated link
// needs (root, network namespaces, /dev/net/tun for TUN and TAP devices), with the emulated ATM
// line as their line hook.
#include "transports/atm/register.hpp"

#include "platform/netns.hpp"
#include "platform/tun.hpp"
#include "transports/atm/capture_options.hpp"
#include "transports/atm/hook.hpp"
#include "transports/socket/register.hpp"

namespace mtperf {
namespace {

// The line's own options: the capture (capture_options.hpp). The socket transport under it
// takes no -O keys, so none is passed on.
std::vector<OptionInfo> atm_options() {
  return atm::capture_option_list();
}

ProbeResult atm_probe(const std::string& root) {
  ProbeResult r;
  std::string why;
  if (root != "/") {
    r.why = "the emulated ATM link is probed on the live system only";
    return r;
  }
  if (!can_create_namespaces(&why) || !can_create_tun(&why)) {
    r.why = "the emulated ATM link needs " + why;
    return r;
  }
  r.usable = true;
  r.features = {"tcp", std::string(kFeatureUdp), "oc3", "oc12"};
  return r;
}

ProbeResult clip_probe(const std::string& root) {
  ProbeResult r = atm_probe(root);
  if (r.usable) r.features.insert(r.features.end(), {"atmarp", "inatmarp", "llc", "vcmux"});
  return r;
}

ProbeResult lane_probe(const std::string& root) {
  ProbeResult r = atm_probe(root);
  if (r.usable) r.features.insert(r.features.end(), {"le_arp", "bus", "flush", "tap"});
  return r;
}

std::unique_ptr<Transport> atm_create(const TransportParams& params) {
  TransportParams socket_params;
  for (const auto& [key, value] : params)
    if (!key.starts_with("capture")) socket_params.emplace(key, value);
  return socket_transport_entry().create(socket_params);
}

}  // namespace

const TransportEntry& clip_transport_entry() {
  static const TransportEntry entry{
      .line = &atm::atm_line_hook(),
      .caps = socket_transport_entry().caps,
      .options = atm_options,
      .probe = clip_probe,
      .create = atm_create,
  };
  return entry;
}

const TransportEntry& lane_transport_entry() {
  static const TransportEntry entry{
      .line = &atm::atm_line_hook(),
      .caps = socket_transport_entry().caps,
      .options = atm_options,
      .probe = lane_probe,
      .create = atm_create,
  };
  return entry;
}

}  // namespace mtperf
