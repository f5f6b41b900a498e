#include "transports/atm/hook.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <istream>
#include <stdexcept>

#include <fmt/format.h>

#include "atmlink/commands/cells_cmd.hpp"
#include "atmlink/commands/testbed_cmd.hpp"
#include "atmlink/emu/testbed.hpp"
#include "platform/request_error.hpp"
#include "transports/atm/capture_options.hpp"

namespace mtperf::atm {
namespace {

std::string rate_text(const LineOptions& options) {
  auto it = options.find("rate");
  return it == options.end() ? kDefaultLineRate : it->second;
}

// --atm-rate and --atm-mtu as given, read against their flags (atmlink/line_flags.hpp).
OptionValues rate_and_mtu(const LineOptions& options) {
  OptionParams given;
  for (const FlagOption& f : atm_rate_and_mtu_flags())
    if (auto it = options.find(f.info.key); it != options.end()) given.insert(*it);
  try {
    return parse_flag_options(atm_rate_and_mtu_flags(), given);
  } catch (const std::invalid_argument& e) {
    throw RequestError(e.what());
  }
}

std::string line_text(const TestHosts& hosts, const LineOptions& options) {
  return fmt::format("emulated {} line {} -> {} ({} adapters, {})", hosts.kind, hosts.near_ns,
                     hosts.far_ns, hosts.links.size(), rate_text(options));
}

nlohmann::json read_state(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// --atm-rate against the line that is up: a different rate is an error, never a run at the
// line's own rate under the rate asked for.
void check_line_rate(const nlohmann::json& state, const std::string& name,
                     const LineOptions& options) {
  if (!options.contains("rate")) return;
  const LineRate asked = line_rate_of(rate_and_mtu(options));
  const double line = state.value("rate_cells_per_s", 0.0);
  if (std::fabs(line - asked.cells_per_s()) > 0.5) {
    throw RequestError("option --atm-rate: " + rate_text(options) + " (" +
                       std::to_string(int64_t(asked.cells_per_s())) +
                       " cells/s), but ATM testbed '" + name + "' runs its line at " +
                       std::to_string(int64_t(line)) +
                       " cells/s; leave --atm-rate out, or take the testbed down and up again");
  }
}

// A state file of `mtperf atm up` as a line that is up.
LineUp line_up_of(const std::string& name, const std::filesystem::path& path) {
  LineUp up;
  up.name = name;
  up.what = "an emulated ATM testbed";
  try {
    const nlohmann::json state = read_state(path.string());
    up.transport = state.value("kind", std::string(to_string(LinkMode::kClip)));
    for (const auto& ns : state.value("namespaces", nlohmann::json::array()))
      if (ns.is_string()) up.namespaces.push_back(ns.get<std::string>());
    up.text = "emulated ATM testbed " + name + " (see mtperf atm status)";
  } catch (const std::exception&) {
    up.transport.clear();
    up.text = "unreadable state file " + path.string();
  }
  return up;
}

int up_command(const std::vector<std::string>& args, std::istream&, std::ostream& out,
               std::ostream& err) {
  return atm_testbed_command("up", args, out, err);
}
int down_command(const std::vector<std::string>& args, std::istream&, std::ostream& out,
                 std::ostream& err) {
  return atm_testbed_command("down", args, out, err);
}
int status_command(const std::vector<std::string>& args, std::istream&, std::ostream& out,
                   std::ostream& err) {
  return atm_testbed_command("status", args, out, err);
}
int cells_command(const std::vector<std::string>& args, std::istream&, std::ostream& out,
                  std::ostream& err) {
  return atm_cells_command(args, out, err);
}

class AtmLineHook final : public LineHook {
 public:
  Line build(std::string_view transport, int adapters, const LineOptions& options) const override {
    AtmTestbedOptions t;
    t.mode = parse_link_mode(transport);
    const OptionValues line = rate_and_mtu(options);
    t.rate = line_rate_of(line);
    t.mtu = line_mtu_of(line);
    t.adapters = std::max(adapters, 1);
    t.capture = capture_options_of(transport, options);
    auto bed = std::make_shared<AtmTestbed>(t);  // removed with the last owner
    const TestHosts hosts = bed->hosts();
    return {bed, hosts, line_text(hosts, options)};
  }

  std::optional<Line> attach(std::string_view transport, const std::string& name,
                             const LineOptions& options) const override {
    const std::string path = atm_state_path(name);
    if (!std::filesystem::exists(path)) return std::nullopt;
    const nlohmann::json state = read_state(path);
    TestHosts hosts = hosts_from_state(state);
    if (hosts.kind != transport) {
      throw std::invalid_argument("ATM testbed '" + name + "' runs " + hosts.kind + ", not " +
                                  std::string(transport) + "; use -T " + hosts.kind);
    }
    hosts.device_kind = device_kind(parse_link_mode(hosts.kind));
    check_line_rate(state, name, options);
    if (!capture_options_of(transport, options).path.empty())
      throw RequestError("-O capture: ATM testbed '" + name +
                         "' is up already and its daemon holds the line; capture it from the "
                         "start with `mtperf atm up --capture FILE`, or leave --testbed out");
    return Line{nullptr, hosts, line_text(hosts, options)};
  }

  std::vector<LineUp> lines_up(const std::string& dir) const override {
    std::vector<LineUp> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      const std::string file = e.path().filename().string();
      if (!file.starts_with("atm-") || !file.ends_with(".json") || file.ends_with(".stats.json"))
        continue;
      out.push_back(line_up_of(file.substr(4, file.size() - 9), e.path()));
    }
    return out;
  }

  std::optional<LineUp> line_up(const std::string& name) const override {
    const std::string path = atm_state_path(name);
    if (!std::filesystem::exists(path)) return std::nullopt;
    return line_up_of(name, path);
  }

  std::string where(const std::optional<std::string>& name) const override {
    return name ? "the emulated ATM testbed " + *name
                : "an emulated ATM line between two namespaces, built for each run";
  }

  std::string option_name(std::string_view key) const override {
    if (key.starts_with("capture")) return "-O " + std::string(key);
    return "--atm-" + std::string(key);
  }

  std::vector<LineOption> run_options() const override { return atm_line_flags(); }

  const LineCommands* commands() const override {
    static const LineCommands commands{
        "atm",
        "emulated ATM: up, down, status (root); cells, decode",
        {
            {"up", "build an emulated ATM testbed, kept by a daemon until `down` (root)",
             up_command},
            {"down", "stop the daemon and remove what it made", down_command},
            {"status", "per-adapter line, host and VC counters of the testbeds that are up",
             status_command},
            {"cells", "the cells of one AAL5 PDU, in hex", cells_command},
            {"decode", "the PDUs of cells read in hex from stdin", atm_decode_command},
        },
    };
    return &commands;
  }
};

}  // namespace

const LineHook& atm_line_hook() {
  static const AtmLineHook hook;
  return hook;
}

}  // namespace mtperf::atm
