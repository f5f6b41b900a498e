#include "cli/topology_cmd.hpp"

#include <exception>

#include "platform/topology.hpp"

namespace mtperf {

namespace {

constexpr const char* kUsage =
    "usage: mtperf topology [--root DIR] [--format text|json]\n"
    "  --root DIR       read sysfs/procfs below DIR instead of / (a copied tree)\n"
    "  --format FORMAT  text (default) or json\n";

}  // namespace

int topology_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::string root = "/", format = "text";
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-h" || arg == "--help") {
      out << kUsage;
      return 0;
    }
    std::string* target = arg == "--root" ? &root : arg == "--format" ? &format : nullptr;
    if (target == nullptr) {
      err << "mtperf topology: unknown option '" << arg << "'\n" << kUsage;
      return 2;
    }
    if (i + 1 >= args.size() || args[i + 1].empty()) {
      err << "mtperf topology: " << arg << " needs a value\n" << kUsage;
      return 2;
    }
    *target = args[++i];
  }
  if (format != "text" && format != "json") {
    err << "mtperf topology: --format '" << format << "': expected text or json\n";
    return 2;
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
