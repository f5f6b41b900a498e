#include "verbs/settings.hpp"

#include <stdexcept>

namespace mtperf::rdma {

std::string_view to_string(Verb v) {
  switch (v) {
    case Verb::send:
      return "send";
    case Verb::write:
      return "write";
    case Verb::write_imm:
      return "write_imm";
    case Verb::read:
      return "read";
  }
  return "?";
}

Verb parse_verb(std::string_view s) {
  for (Verb v : {Verb::send, Verb::write, Verb::write_imm, Verb::read}) {
    if (s == to_string(v)) return v;
  }
  throw std::invalid_argument("rdma option verb: expected send, write, write_imm or read, got '" +
                              std::string(s) + "'");
}

std::string_view to_string(SrqMode m) {
  switch (m) {
    case SrqMode::automatic:
      return "auto";
    case SrqMode::on:
      return "on";
    case SrqMode::off:
      return "off";
  }
  return "?";
}

std::string_view to_string(ConnectMode m) {
  switch (m) {
    case ConnectMode::cm:
      return "cm";
    case ConnectMode::oob:
      return "oob";
  }
  return "?";
}

}  // namespace mtperf::rdma
