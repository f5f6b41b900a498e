#include "cli/topology_cmd.hpp"

#include <exception>

#include <nlohmann/json.hpp>

#include "platform/command_line.hpp"
#include "platform/topology.hpp"

namespace mtperf {

int topology_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  namespace po = boost::program_options;
  cli::CommandSpec spec("topology", "[--root DIR] [--format text|json]",
                        "Prints each network adapter with its PCI controller, NUMA node, IRQs and "
                        "interrupt CPUs.");
  auto add = spec.options.add_options();
  add("root", po::value<std::string>()->default_value("/", "/")->value_name("DIR"),
      "read sysfs and procfs below DIR (a copied tree)");
  add("format", po::value<std::string>()->default_value("text", "text")->value_name("FORMAT"),
      "text | json");
  int rc = 0;
  const auto cl = cli::read_command_line(spec, args, out, err, rc);
  if (!cl) return rc;
  const std::string root = cl->get<std::string>("root");
  const std::string format = cl->get<std::string>("format");
  if (root.empty())
    return cli::usage_error(spec, err, "option " + cl->typed("root") + ": an empty directory");
  if (format != "text" && format != "json") {
    return cli::usage_error(
        spec, err, "option " + cl->typed("format") + ": '" + format + "' is not text or json");
  }
  try {
    Topology topology = read_topology(root);
    if (format == "json")
      out << to_json(topology).dump(2) << "\n";
    else
      out << render_text(topology);
  } catch (const std::exception& e) {
    err << "mtperf topology: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace mtperf
