#include "fleet/model.hpp"

#include <cmath>
#include <stdexcept>

#include "workloads/json_field.hpp"

namespace mtperf::fleet {
namespace jf = json_field;
using nlohmann::json;

namespace {

json opt(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

template <class T>
void read_opt(const json& j, const std::string& where, const char* key, std::optional<T>& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  out = jf::value<T>(*it, where + "." + key);
}

// A link rate in bits/s, null or absent when unknown; bounded (a peer's JOIN carries it).
std::optional<double> rate_of(const json& j, const std::string& where, const char* key) {
  std::optional<double> v;
  read_opt(j, where, key, v);
  if (v && !(std::isfinite(*v) && *v > 0 && *v <= kMaxLineBps))
    throw std::invalid_argument(where + "." + key + ": not a link rate in (0, 10^15] bits/s");
  return v;
}

bool is_line_source(const std::string& s) {
  return s == "sysfs" || s == "rdma port" || s == "--line-rate" || s == "none";
}

}  // namespace

json to_json(const PairResult& r) {
  json j = {{"step", r.step},
            {"round", r.round},
            {"transport", r.transport},
            {"src", r.pair.src},
            {"dst", r.pair.dst},
            {"ok", r.ok},
            {"throughput_bps", r.throughput_bps},
            {"throughput_c2s_bps", r.throughput_c2s_bps},
            {"throughput_s2c_bps", r.throughput_s2c_bps},
            {"transaction_rate", r.transaction_rate},
            {"p50_us", opt(r.p50_us)},
            {"p99_us", opt(r.p99_us)},
            {"c2s_sent", r.c2s_sent},
            {"c2s_received", r.c2s_received},
            {"s2c_sent", r.s2c_sent},
            {"s2c_received", r.s2c_received},
            {"server_counted", r.server_counted},
            {"start_offset_ns", r.start_offset_ns ? json(*r.start_offset_ns) : json(nullptr)},
            {"tries", r.tries},
            {"line_bps", opt(r.line_bps)},
            {"line_source", r.line_source}};
  if (!r.error.empty()) j["error"] = r.error;
  return j;
}

PairResult pair_result_from_json(const json& j, const std::string& where) {
  PairResult r;
  r.step = jf::required<uint32_t>(j, where, "step");
  r.round = jf::required<uint32_t>(j, where, "round");
  r.transport = jf::required<uint32_t>(j, where, "transport");
  r.pair.src = jf::required<uint32_t>(j, where, "src");
  r.pair.dst = jf::required<uint32_t>(j, where, "dst");
  r.ok = jf::required<bool>(j, where, "ok");
  jf::optional(j, where, "error", r.error);
  jf::optional(j, where, "throughput_bps", r.throughput_bps);
  jf::optional(j, where, "throughput_c2s_bps", r.throughput_c2s_bps);
  jf::optional(j, where, "throughput_s2c_bps", r.throughput_s2c_bps);
  jf::optional(j, where, "transaction_rate", r.transaction_rate);
  read_opt(j, where, "p50_us", r.p50_us);
  read_opt(j, where, "p99_us", r.p99_us);
  jf::optional(j, where, "c2s_sent", r.c2s_sent);
  jf::optional(j, where, "c2s_received", r.c2s_received);
  jf::optional(j, where, "s2c_sent", r.s2c_sent);
  jf::optional(j, where, "s2c_received", r.s2c_received);
  jf::optional(j, where, "server_counted", r.server_counted);
  read_opt(j, where, "start_offset_ns", r.start_offset_ns);
  jf::optional(j, where, "tries", r.tries);
  r.line_bps = rate_of(j, where, "line_bps");
  if (j.contains("line_source")) {
    r.line_source = jf::string(j.at("line_source"), where + ".line_source", 16);
    if (!is_line_source(r.line_source))
      throw std::invalid_argument(where + ".line_source: '" + r.line_source +
                                  "' is not sysfs, rdma port, --line-rate or none");
  }
  return r;
}

json to_json(const Member& m) {
  json j = {{"rank", m.rank},         {"host", m.host},    {"address", m.address},
            {"port", m.port},         {"cpus", m.cpus},    {"transports", m.transports},
            {"launcher", m.launcher}, {"joined", m.joined}};
  if (!m.lost.empty()) j["lost"] = m.lost;
  j["adapter"] = m.adapter;
  j["speed_bps"] = opt(m.speed_bps);
  j["rdma_rate_bps"] = opt(m.rdma_rate_bps);
  if (!m.group.empty()) j["group"] = m.group;
  return j;
}

Member member_from_json(const json& j, const std::string& where) {
  Member m;
  m.rank = jf::required<uint32_t>(j, where, "rank");
  m.host = jf::value<std::string>(j.at("host"), where + ".host");
  jf::optional(j, where, "address", m.address);
  jf::optional(j, where, "port", m.port);
  jf::optional(j, where, "cpus", m.cpus);
  jf::optional(j, where, "transports", m.transports);
  jf::optional(j, where, "launcher", m.launcher);
  jf::optional(j, where, "joined", m.joined);
  jf::optional(j, where, "lost", m.lost);
  if (j.contains("adapter")) m.adapter = jf::string(j.at("adapter"), where + ".adapter", 64);
  m.speed_bps = rate_of(j, where, "speed_bps");
  m.rdma_rate_bps = rate_of(j, where, "rdma_rate_bps");
  if (j.contains("group")) m.group = jf::string(j.at("group"), where + ".group", 128);
  return m;
}

json to_json(const FleetDoc& d) {
  json roster = json::array(), results = json::array(), steps = json::array(),
       rounds = json::array();
  for (const auto& m : d.roster)
    roster.push_back(to_json(m));
  for (const auto& r : d.results)
    results.push_back(to_json(r));
  for (const auto& s : d.steps) {
    steps.push_back(
        {{"step", s.step},
         {"round", s.round},
         {"transport", s.transport},
         {"pairs", s.pairs},
         {"start_spread_ns", s.start_spread_ns ? json(*s.start_spread_ns) : json(nullptr)},
         {"seconds", s.seconds},
         {"clock_moved_ns", s.clock_moved_ns ? json(*s.clock_moved_ns) : json(nullptr)}});
  }
  for (const auto& r : d.plan.rounds) {
    json pairs = json::array();
    for (const auto& p : r.pairs)
      pairs.push_back({p.src, p.dst});
    rounds.push_back(pairs);
  }
  json plan = {{"pattern", d.plan.pattern},
               {"disjoint", d.plan.disjoint},
               {"both_directions", d.plan.both_directions},
               {"concurrency", std::string(to_string(d.concurrency))},
               {"ordered_pairs", d.plan.ordered_pairs()},
               {"rounds", rounds}};
  json fleet = {{"launcher", d.launcher},
                {"launcher_why", d.launcher_why},
                {"line_rate_bps", opt(d.line_rate_bps)},
                {"groups_from", d.groups_from.empty() ? json(nullptr) : json(d.groups_from)},
                {"size", d.roster.size()},
                {"plan", plan},
                {"transports", d.transports},
                {"workload", d.workload},
                {"headline", d.headline},
                {"errors", d.errors},
                {"complete", d.complete},
                {"clock_offset_max_ns", d.clock_offset_max_ns}};
  return {{"schema", 1},      {"fleet", fleet},     {"test", d.test},
          {"roster", roster}, {"results", results}, {"steps", steps}};
}

FleetDoc fleet_from_json(const json& j) {
  if (!j.is_object() || !j.contains("fleet") || !j["fleet"].is_object())
    throw std::invalid_argument("not an mtperf fleet document (no \"fleet\" object)");
  const json& f = j["fleet"];
  FleetDoc d;
  jf::optional(f, "fleet", "launcher", d.launcher);
  jf::optional(f, "fleet", "launcher_why", d.launcher_why);
  const json& roster = j.at("roster");
  for (size_t i = 0; i < roster.size(); ++i)
    d.roster.push_back(member_from_json(roster[i], "roster[" + std::to_string(i) + "]"));
  const json& plan = f.at("plan");
  d.plan.pattern = jf::required<std::string>(plan, "fleet.plan", "pattern");
  d.plan.disjoint = jf::required<bool>(plan, "fleet.plan", "disjoint");
  d.plan.both_directions = jf::required<bool>(plan, "fleet.plan", "both_directions");
  d.concurrency = jf::required<std::string>(plan, "fleet.plan", "concurrency") == "isolated"
                      ? Concurrency::isolated
                      : Concurrency::round;
  for (const json& r : plan.at("rounds")) {
    Round round;
    for (const json& p : r)
      round.pairs.push_back({jf::value<uint32_t>(p.at(0), "fleet.plan.rounds"),
                             jf::value<uint32_t>(p.at(1), "fleet.plan.rounds")});
    d.plan.rounds.push_back(std::move(round));
  }
  d.transports = jf::required<std::vector<std::string>>(f, "fleet", "transports");
  jf::optional(f, "fleet", "workload", d.workload);
  jf::optional(f, "fleet", "headline", d.headline);
  jf::optional(f, "fleet", "errors", d.errors);
  jf::optional(f, "fleet", "complete", d.complete);
  d.line_rate_bps = rate_of(f, "fleet", "line_rate_bps");
  if (f.contains("groups_from") && !f["groups_from"].is_null())
    d.groups_from = jf::string(f["groups_from"], "fleet.groups_from", 1100);
  if (j.contains("test")) d.test = j["test"];
  const json& results = j.at("results");
  for (size_t i = 0; i < results.size(); ++i)
    d.results.push_back(pair_result_from_json(results[i], "results[" + std::to_string(i) + "]"));
  return d;
}

}  // namespace mtperf::fleet
