// The workload table (workloads/kind.hpp): every workload has its one line, and what each says
// of itself is what the runner, the sizing and the report do with it.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/engine_config.hpp"
#include "workloads/kind.hpp"

using namespace mtperf;

TEST_CASE("kinds: every workload has exactly one line, named as -w takes it", "[kinds]") {
  std::set<std::string_view> names;
  std::set<Workload> ids;
  for (const WorkloadKind* k : workload_kinds()) {
    INFO(k->name);
    CHECK(names.insert(k->name).second);
    CHECK(ids.insert(k->id).second);
    CHECK(&kind_of(k->id) == k);
    CHECK(find_kind(k->name) == k);
    CHECK(parse_workload(k->name) == k->id);
    CHECK(to_string(k->id) == k->name);
    CHECK_FALSE(k->summary.empty());
    CHECK_FALSE(k->options.empty());
    REQUIRE(k->role);
    REQUIRE(k->sends_in_flight);
    REQUIRE(k->buffer_size);
    CHECK(k->flows_per_flow >= 1);
    CHECK(k->conns_per_flow >= 1);
    // Transactions are what a request/response workload counts, bits what the others count.
    CHECK((k->headline == Headline::transactions) == k->request_response);
  }
  CHECK(ids.size() == 5);  // stream, maerts, bidir, rr, crr: a new Workload needs its line
  CHECK(find_kind("tcp_rr") == nullptr);
  CHECK(workload_names(" | ") == "stream | maerts | bidir | rr | crr");
  CHECK(workload_names(", ", " or ") == "stream, maerts, bidir, rr or crr");
  CHECK_THROWS_WITH(parse_workload("rrr"),
                    "unknown workload 'rrr' (stream, maerts, bidir, rr, crr)");
}

TEST_CASE("kinds: the roles each side plays", "[kinds]") {
  TestSpec s;
  s.flows = 2;
  auto role = [&](Workload w, uint32_t i, Side side) {
    s.workload = w;
    return role_of(s, i, side);
  };
  CHECK(role(Workload::stream, 0, Side::client) == Role::sender);
  CHECK(role(Workload::stream, 0, Side::server) == Role::receiver);
  CHECK(role(Workload::maerts, 1, Side::client) == Role::receiver);
  CHECK(role(Workload::maerts, 1, Side::server) == Role::sender);
  // bidir: -P 2 is four flows, the first two client -> server.
  s.workload = Workload::bidir;
  CHECK(s.flows_total() == 4);
  CHECK(role(Workload::bidir, 1, Side::client) == Role::sender);
  CHECK(role(Workload::bidir, 2, Side::client) == Role::receiver);
  CHECK(role(Workload::bidir, 2, Side::server) == Role::sender);
  CHECK(role(Workload::rr, 0, Side::client) == Role::rr_client);
  CHECK(role(Workload::rr, 0, Side::server) == Role::rr_server);
  CHECK(role(Workload::crr, 0, Side::client) == Role::crr_client);
  CHECK(role(Workload::crr, 0, Side::server) == Role::crr_server);
  s.workload = Workload::rr;
  CHECK(s.flows_total() == 2);
}

TEST_CASE("kinds: buffers and connections follow the kind", "[kinds]") {
  Caps caps;
  caps.max_outstanding = 64;
  TestSpec s;
  s.req_size = 100;
  s.resp_size = 3000;
  s.burst = 4;
  s.workload = Workload::rr;
  CHECK(buffers_per_flow(s, caps) == 5);  // the burst in flight, one to receive into
  CHECK(buffer_size(s) == 4 * 3000);      // TCP gathers a burst of responses
  s.proto = Proto::udp;
  CHECK(buffer_size(s) == 3000);  // a datagram is one response
  s.proto = Proto::tcp;
  s.workload = Workload::stream;
  s.msg_size = 1024;
  CHECK(buffers_per_flow(s, caps) == 9);  // eight sends in flight at max_outstanding 64
  CHECK(buffer_size(s) == 64 * 1024);     // a TCP receiver reads what has arrived
  s.workload = Workload::crr;
  CHECK(engine_config(s, 3, caps).max_conns == 12);
  CHECK(engine_config(s, 3, caps).request_response);
  CHECK(flow_setup(s, 0, 1, caps).per_transaction);
  s.workload = Workload::bidir;
  CHECK(engine_config(s, 3, caps).max_conns == 3);
  CHECK_FALSE(flow_setup(s, 0, 1, caps).request_response);
}

namespace {

// Every {"workload": {"enum": [...]}} in a JSON Schema document, wherever it sits.
void workload_enums(const nlohmann::json& j, std::vector<std::vector<std::string>>& out) {
  if (j.is_object()) {
    for (auto& [key, value] : j.items()) {
      if (key == "workload" && value.is_object() && value.contains("enum"))
        out.push_back(value["enum"].get<std::vector<std::string>>());
      workload_enums(value, out);
    }
  } else if (j.is_array()) {
    for (const auto& v : j)
      workload_enums(v, out);
  }
}

}  // namespace

// The JSON Schemas (docs/json-schema/) list the workloads as the table does: every one, or those
// whose headline is throughput (the run document's latency is null for them). A workload added
// to the table and not to the schemas fails here, naming the enum to write.
TEST_CASE("kinds: the JSON Schemas' workload enums are the table's", "[kinds]") {
  std::vector<std::string> all, throughput;
  for (const WorkloadKind* k : workload_kinds()) {
    all.emplace_back(k->name);
    if (k->headline == Headline::throughput) throughput.emplace_back(k->name);
  }
  const std::filesystem::path schemas =
      std::filesystem::path(MTPERF_FIXTURES).parent_path().parent_path() / "docs/json-schema";
  size_t seen = 0;
  for (const auto& f : std::filesystem::directory_iterator(schemas)) {
    if (f.path().extension() != ".json") continue;
    std::ifstream in(f.path());
    std::vector<std::vector<std::string>> enums;
    workload_enums(nlohmann::json::parse(in), enums);
    for (const auto& e : enums) {
      INFO(f.path().filename().string()
           << ": " << nlohmann::json(e).dump() << "; the table's: " << nlohmann::json(all).dump()
           << ", by throughput: " << nlohmann::json(throughput).dump());
      CHECK((e == all || e == throughput));
      ++seen;
    }
  }
  CHECK(seen >= 3);  // the run document's test and its latency rule, the compare document's cells
}
