#include "platform/placement.hpp"

#include <nlohmann/json.hpp>

#include "platform/affinity.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

namespace mtperf {

std::string to_string(BindMode mode) {
  switch (mode) {
    case BindMode::irq:
      return "irq";
    case BindMode::numa:
      return "numa";
    case BindMode::cpus:
      return "cpus";
    case BindMode::none:
      return "none";
  }
  return "none";
}

namespace {

std::string join(const std::vector<std::string>& items, const char* sep = ", ") {
  std::string out;
  for (const auto& item : items)
    out += (out.empty() ? "" : sep) + item;
  return out;
}

std::vector<std::string> names_of(const Topology& t) {
  std::vector<std::string> names;
  for (const auto& a : t.adapters)
    names.push_back(a.name);
  return names;
}

// Why auto:N passes an adapter over, or "" when it qualifies.
std::string skip_reason(const Adapter& a, bool allow_virtual) {
  if (a.type == LinkType::loopback) return "loopback";
  if (!a.up) return "down";
  if (a.type == LinkType::virtual_link && !a.emulated && !allow_virtual)
    return "virtual; allow virtual adapters to use it";
  return "";
}

std::vector<const Adapter*> choose_auto(const Topology& t, const PlacementRequest& req) {
  if (req.auto_count <= 0)
    throw std::invalid_argument("no adapters requested: give --adapters LIST or auto:N");
  // Adapters without a controller (veth) each count as their own controller; '~' sorts them
  // after the PCI controllers.
  std::map<std::string, std::vector<const Adapter*>> groups;
  std::vector<std::string> skipped;
  for (const auto& a : t.adapters) {
    std::string why = skip_reason(a, req.allow_virtual);
    if (!why.empty()) {
      skipped.push_back(a.name + " (" + why + ")");
      continue;
    }
    groups[a.controller.empty() ? "~" + a.name : a.controller].push_back(&a);
  }
  size_t qualifying = 0;
  for (auto& [key, list] : groups) {
    std::sort(list.begin(), list.end(), [](const Adapter* x, const Adapter* y) {
      return std::tie(x->pci_address, x->name) < std::tie(y->pci_address, y->name);
    });
    size_t limit = req.per_controller > 0 ? static_cast<size_t>(req.per_controller) : list.size();
    qualifying += std::min(limit, list.size());
  }
  std::vector<const Adapter*> chosen;
  for (size_t round = 0; chosen.size() < static_cast<size_t>(req.auto_count); ++round) {
    if (req.per_controller > 0 && round >= static_cast<size_t>(req.per_controller)) break;
    bool any = false;
    for (const auto& [key, list] : groups) {
      if (round >= list.size() || chosen.size() >= static_cast<size_t>(req.auto_count)) continue;
      chosen.push_back(list[round]);
      any = true;
    }
    if (!any) break;
  }
  if (chosen.size() < static_cast<size_t>(req.auto_count)) {
    std::vector<std::string> usable;
    for (const auto& [key, list] : groups)
      for (const Adapter* a : list)
        usable.push_back(a->name);
    throw std::invalid_argument(fmt::format(
        "auto:{} needs {} adapters but only {} qualify{} (usable: {}{}{})", req.auto_count,
        req.auto_count, qualifying,
        req.per_controller > 0 ? fmt::format(" with at most {} per controller over {} controllers",
                                             req.per_controller, groups.size())
                               : "",
        usable.empty() ? "none" : join(usable),
        skipped.empty() ? "" : "; skipped: ", join(skipped)));
  }
  return chosen;
}

std::vector<const Adapter*> choose_explicit(const Topology& t, const PlacementRequest& req) {
  std::vector<const Adapter*> chosen;
  std::map<std::string, std::vector<std::string>> per_controller;
  for (const auto& name : req.adapters) {
    const Adapter* a = t.find_adapter(name);
    if (a == nullptr)
      throw std::invalid_argument("unknown adapter '" + name +
                                  "'; adapters here: " + join(names_of(t)));
    if (std::find(chosen.begin(), chosen.end(), a) != chosen.end())
      throw std::invalid_argument("adapter '" + name + "' is listed twice");
    if (!a->up)
      throw std::invalid_argument("adapter '" + name + "' is down (operstate " + a->operstate +
                                  "); bring it up or choose another");
    chosen.push_back(a);
    if (a->controller.empty()) continue;
    auto& names = per_controller[a->controller];
    names.push_back(name);
    if (req.per_controller > 0 && names.size() > static_cast<size_t>(req.per_controller))
      throw std::invalid_argument(
          fmt::format("{} share controller {}, more than --per-controller {}", join(names),
                      a->controller, req.per_controller));
  }
  return chosen;
}

void check_request(const PlacementRequest& req) {
  if (req.flows_per_adapter < 1 || req.flows_per_adapter > kMaxFlowsPerAdapter)
    throw std::invalid_argument(fmt::format("flows per adapter must be 1..{}, got {}",
                                            kMaxFlowsPerAdapter, req.flows_per_adapter));
  if (req.per_controller < 0 || req.per_controller > kMaxAdapters)
    throw std::invalid_argument(
        fmt::format("per-controller must be 0..{}, got {}", kMaxAdapters, req.per_controller));
  if (req.auto_count > kMaxAdapters || req.adapters.size() > static_cast<size_t>(kMaxAdapters))
    throw std::invalid_argument(fmt::format("at most {} adapters", kMaxAdapters));
  if (req.bind == BindMode::cpus && req.bind_cpus.empty())
    throw std::invalid_argument("bind to a CPU list needs at least one CPU");
}

// Fills worker_cpu/worker_cpus/reason for one flow.
void bind_flow(const Topology& t, const PlacementRequest& req, const Adapter& a, FlowPlacement& f,
               size_t& fallback_next) {
  switch (req.bind) {
    case BindMode::irq:
      if (!f.irq_cpus.empty()) {
        f.worker_cpu = f.irq_cpus[static_cast<size_t>(f.adapter_flow) % f.irq_cpus.size()];
        f.reason = fmt::format("CPU {} takes {}'s interrupts", f.worker_cpu, a.name);
      } else if (!req.fallback_cpus.empty()) {
        f.worker_cpu = req.fallback_cpus[fallback_next++ % req.fallback_cpus.size()];
        f.reason = fmt::format("{} has no IRQs ({}); fallback CPU {}", a.name,
                               a.is_virtual() ? "virtual adapter" : "none found", f.worker_cpu);
      } else {
        f.reason = fmt::format("{} has no IRQs ({}) and no fallback CPUs were given: not bound",
                               a.name, a.is_virtual() ? "virtual adapter" : "none found");
      }
      break;
    case BindMode::numa: {
      std::vector<int> cpus;
      if (a.numa_node >= 0 && static_cast<size_t>(a.numa_node) < t.node_cpus.size())
        cpus = t.node_cpus[static_cast<size_t>(a.numa_node)];
      if (cpus.empty()) cpus = a.local_cpus;
      f.worker_cpus = cpus;
      if (cpus.size() == 1) f.worker_cpu = cpus[0];
      f.reason = cpus.empty() ? a.name + " has no known NUMA node: not bound"
                              : fmt::format("CPUs of {}'s NUMA node{}", a.name,
                                            a.numa_node >= 0 ? " " + std::to_string(a.numa_node)
                                                             : " (local_cpulist)");
      return;
    }
    case BindMode::cpus:
      f.worker_cpu = req.bind_cpus[static_cast<size_t>(f.flow) % req.bind_cpus.size()];
      f.reason = "given CPU list";
      break;
    case BindMode::none:
      f.reason = "not bound";
      return;
  }
  if (f.worker_cpu >= 0) f.worker_cpus = {f.worker_cpu};
}

void add_notes(const Topology& t, Placement& p) {
  std::map<int, std::set<std::string>> adapters_on_cpu;
  for (const auto& f : p.flows)
    if (f.worker_cpu >= 0) adapters_on_cpu[f.worker_cpu].insert(f.adapter);
  for (const auto& [cpu, names] : adapters_on_cpu) {
    if (names.size() > 1)
      p.notes.push_back(fmt::format("CPU {} runs flows of {} adapters: {}", cpu, names.size(),
                                    join({names.begin(), names.end()})));
    if (!t.online_cpus.empty() &&
        std::find(t.online_cpus.begin(), t.online_cpus.end(), cpu) == t.online_cpus.end())
      p.notes.push_back(fmt::format("CPU {} is not online here", cpu));
  }
}

}  // namespace

void parse_adapter_selection(std::string_view text, PlacementRequest& request) {
  if (text.starts_with("auto:")) {
    std::string_view digits = text.substr(5);
    int n = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (ec != std::errc() || ptr != digits.data() + digits.size() || n < 1 || n > kMaxAdapters)
      throw std::invalid_argument(
          fmt::format("--adapters '{}': auto:N needs N in 1..{}", text, kMaxAdapters));
    request.adapters.clear();
    request.auto_count = n;
    return;
  }
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view name = text.substr(start, end - start);
    // IFNAMSIZ - 1, and no characters the kernel rejects in interface names.
    if (name.empty() || name.size() > 15 || name.find_first_of("/ \t:") != std::string_view::npos)
      throw std::invalid_argument(fmt::format(
          "--adapters '{}': '{}' is not an interface name (1-15 characters, no '/', ':' or "
          "spaces); use a comma-separated list or auto:N",
          text, name));
    names.emplace_back(name);
    start = end + 1;
  }
  if (names.size() > static_cast<size_t>(kMaxAdapters))
    throw std::invalid_argument(fmt::format("--adapters: at most {} adapters", kMaxAdapters));
  request.adapters = std::move(names);
  request.auto_count = 0;
}

void parse_bind(std::string_view text, PlacementRequest& request) {
  request.bind_cpus.clear();
  if (text == "irq") {
    request.bind = BindMode::irq;
  } else if (text == "numa") {
    request.bind = BindMode::numa;
  } else if (text == "none") {
    request.bind = BindMode::none;
  } else {
    try {
      request.bind_cpus = parse_cpu_list(text);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format(
          "'{}' is not irq, numa, none or a CPU list such as 0-3,8 ({})", text, e.what()));
    }
    if (request.bind_cpus.empty())
      throw std::invalid_argument(fmt::format("--bind '{}': empty CPU list", text));
    request.bind = BindMode::cpus;
  }
}

Placement place(const Topology& topology, const PlacementRequest& request) {
  check_request(request);
  std::vector<const Adapter*> chosen = request.adapters.empty()
                                           ? choose_auto(topology, request)
                                           : choose_explicit(topology, request);
  Placement p;
  p.bind = request.bind;
  size_t fallback_next = 0;
  for (const Adapter* a : chosen) {
    p.adapters.push_back(a->name);
    for (int j = 0; j < request.flows_per_adapter; ++j) {
      FlowPlacement f;
      f.flow = static_cast<int>(p.flows.size());
      f.adapter_flow = j;
      f.adapter = a->name;
      f.controller = a->controller;
      f.irq_cpus = a->irq_cpus();
      for (const auto& irq : a->irqs)
        if (irq.number >= 0) f.irqs.push_back(irq.number);  // emulated adapters have none
      f.numa_node = a->numa_node;
      bind_flow(topology, request, *a, f, fallback_next);
      p.flows.push_back(std::move(f));
    }
  }
  add_notes(topology, p);
  return p;
}

nlohmann::json to_json(const Placement& p) {
  using nlohmann::json;
  json flows = json::array();
  for (const auto& f : p.flows)
    flows.push_back({{"flow", f.flow},
                     {"adapter_flow", f.adapter_flow},
                     {"adapter", f.adapter},
                     {"controller", f.controller.empty() ? json(nullptr) : json(f.controller)},
                     {"irq_cpus", f.irq_cpus},
                     {"irqs", f.irqs},
                     {"numa_node", f.numa_node < 0 ? json(nullptr) : json(f.numa_node)},
                     {"worker_cpu", f.worker_cpu < 0 ? json(nullptr) : json(f.worker_cpu)},
                     {"worker_cpus", f.worker_cpus},
                     {"reason", f.reason}});
  return {
      {"bind", to_string(p.bind)}, {"adapters", p.adapters}, {"flows", flows}, {"notes", p.notes}};
}

std::string render_text(const Placement& p) {
  auto dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  std::string out = fmt::format("placement: {} adapter(s), {} flow(s), pin {}\n", p.adapters.size(),
                                p.flows.size(), to_string(p.bind));
  out += fmt::format("{:>4} {:<14} {:<12} {:>4} {:<10} {:<10} {}\n", "FLOW", "ADAPTER",
                     "CONTROLLER", "NUMA", "IRQ CPUS", "WORKER", "REASON");
  for (const auto& f : p.flows)
    out += fmt::format("{:>4} {:<14} {:<12} {:>4} {:<10} {:<10} {}\n", f.flow, f.adapter,
                       dash(f.controller), f.numa_node < 0 ? "-" : std::to_string(f.numa_node),
                       dash(format_cpu_list(f.irq_cpus)), dash(format_cpu_list(f.worker_cpus)),
                       f.reason);
  for (const auto& note : p.notes)
    out += "note: " + note + "\n";
  return out;
}

}  // namespace mtperf
