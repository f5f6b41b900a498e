#include "platform/link_mtu.hpp"

#include <cstdio>
#include <stdexcept>

#include "platform/exec.hpp"
#include "platform/shape.hpp"

namespace mtperf {

int parse_ip_link_mtu(const std::string& text) {
  // The word "mtu" followed by a number of 1..6 digits, each a whole word.
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  for (size_t at = text.find("mtu "); at != std::string::npos; at = text.find("mtu ", at + 1)) {
    if (at > 0 && !space(text[at - 1])) continue;
    size_t from = at + 4, to = from;
    while (to < text.size() && shape::digit(text[to]))
      ++to;
    if (to == from || to - from > 6 || (to < text.size() && !space(text[to]))) continue;
    return std::stoi(text.substr(from, to - from));
  }
  throw std::runtime_error("no MTU in ip's output: '" + text.substr(0, 200) + "'");
}

int link_mtu(const std::string& ns, const std::string& ifname) {
  return parse_ip_link_mtu(run_checked({"ip", "-n", ns, "-o", "link", "show", "dev", ifname}));
}

void set_link_mtu(const std::string& ns, const std::string& ifname, int mtu) {
  run_checked({"ip", "-n", ns, "link", "set", "dev", ifname, "mtu", std::to_string(mtu)});
}

void set_link_up(const std::string& ns, const std::string& ifname, bool up) {
  run_checked({"ip", "-n", ns, "link", "set", "dev", ifname, up ? "up" : "down"});
}

LinkMtuOverride::LinkMtuOverride(std::vector<NamespacedLink> links) : links_(std::move(links)) {
  for (const auto& l : links_)
    original_.push_back(link_mtu(l.ns, l.ifname));
}

void LinkMtuOverride::set(int mtu) {
  if (mtu < kMinLinkMtu || mtu > kMaxLinkMtu)
    throw std::invalid_argument("MTU " + std::to_string(mtu) + " is outside " +
                                std::to_string(kMinLinkMtu) + ".." + std::to_string(kMaxLinkMtu));
  changed_ = true;
  for (const auto& l : links_)
    set_link_mtu(l.ns, l.ifname, mtu);
}

LinkMtuOverride::~LinkMtuOverride() {
  if (!changed_) return;
  for (size_t i = 0; i < links_.size(); ++i) {
    try {
      set_link_mtu(links_[i].ns, links_[i].ifname, original_[i]);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "mtperf: could not restore the MTU %d of %s in %s: %s\n", original_[i],
                   links_[i].ifname.c_str(), links_[i].ns.c_str(), e.what());
    }
  }
}

}  // namespace mtperf
