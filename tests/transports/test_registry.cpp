// The registry's line hooks, whatever transports this build has: each once, each with what the
// run layer and the command line call.
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "transports/api/registry.hpp"

using namespace mtperf;

TEST_CASE("line_hooks lists every entry's hook once, in the registry's order") {
  const std::vector<const LineHook*> hooks = line_hooks();
  std::set<const LineHook*> seen(hooks.begin(), hooks.end());
  CHECK(seen.size() == hooks.size());
  for (const TransportEntry& e : transports())
    if (e.line != nullptr) CHECK(seen.contains(e.line));
  for (const TransportEntry& e : transports())
    if (e.line == nullptr) CHECK(e.probe != nullptr);  // an ordinary transport: nothing to check
}

TEST_CASE("a line hook's own command has a word, a summary and a handler per subcommand") {
  std::set<std::string> groups;
  for (const LineHook* hook : line_hooks()) {
    const LineCommands* c = hook->commands();
    if (c == nullptr) continue;
    CHECK(!c->group.empty());
    CHECK(!c->summary.empty());
    CHECK(groups.insert(c->group).second);  // two families may not claim one word
    REQUIRE(!c->subcommands.empty());
    std::set<std::string> names;
    for (const LineCommand& sub : c->subcommands) {
      CHECK(names.insert(sub.name).second);
      CHECK(!sub.summary.empty());
      CHECK(sub.run != nullptr);
    }
  }
}

TEST_CASE("a line hook finds no line under a name nobody brought up") {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("mtperf-test-lines-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const TransportEntry& e : transports()) {
    if (e.line == nullptr) continue;
    INFO(e.name);
    CHECK_FALSE(e.line->attach(e.name, "no-such-line-here", {}));
    CHECK_FALSE(e.line->line_up("no-such-line-here"));
    CHECK(e.line->lines_up(dir).empty());
    CHECK(e.line->where("x") != e.line->where(std::nullopt));
    CHECK(e.line->option_name("mtu").starts_with("--"));
  }
  std::filesystem::remove_all(dir);
}
