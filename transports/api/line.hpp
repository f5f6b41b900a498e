#pragma once
// A transport that brings its own line: a registry entry whose transport runs over a link it
// builds itself between two network namespaces ("hosts"), never over loopback or the host's
// adapters as they are (the emulated ATM line of clip and lane). Its entry's `line` points at a
// LineHook, through which the run layer builds such a line for a run, or finds one that is up
// under a name, and runs between its hosts like over any testbed; the command line exposes the
// family's own commands (`mtperf atm up|down|status|cells|decode`) from the same hook. Nothing
// outside transports/ knows what the line is.
//
//   harness/  run -T X [--testbed NAME]  ──► hook.attach(X, NAME, options)  (a line that is up)
//                                        └─► hook.build(X, adapters, options)  (one for the run)
//             both give a Line: TestHosts (namespaces, links, devices, controllers, IRQ CPUs)
//   cli/      mtperf GROUP SUB ...       ──► hook.commands(): {name, summary, run(args, io)}
//
// Setup path only: virtual calls, allocation and exceptions are fine. A hook is a static object
// that lives as long as the program; its methods may be called from any thread, one at a time.
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "platform/netns.hpp"
#include "platform/typed_options.hpp"

namespace mtperf {

// The line options of a run as the user gave them, by generic key: "rate" (the line rate: a
// name such as oc3, or cells/s) and "mtu" (bytes). Only the options given are present; the hook
// supplies its defaults. Beside them, the transport's own -O options (TransportParams) under
// their keys, for a line that owns some (the ATM line's capture_*). The hook names them as the
// command line spells them in its errors.
using LineOptions = std::map<std::string, std::string>;

// One command-line option a line takes: `--flag VALUE` sets LineOptions[info.key] when given.
// Typed as a -O key is (platform/typed_options.hpp: its type, range, default and help), so that
// one parser reads both and --help, the man pages and `mtperf transports` print both from the
// same table. The hook reads the values (build, attach); the command line only carries them.
using LineOption = FlagOption;

// A line a run goes over. `owner` keeps a line built for the run (its threads, devices and
// namespaces) and tears it down when the last copy goes; it is null for a line that is up under a
// name (whoever brought it up keeps it).
struct Line {
  std::shared_ptr<void> owner;
  TestHosts hosts;   // the two hosts and their links, as a testbed's
  std::string text;  // for a report's "hosts": "emulated clip line NEAR -> FAR (2 adapters, oc12)"
};

// A line that is up under a name (kept by a daemon, in a state file of its own).
struct LineUp {
  std::string name;
  std::string transport;                // what runs over it (-T); "" when its state is unreadable
  std::vector<std::string> namespaces;  // those it made
  std::string what;                     // what it is, with an article: "an emulated ATM testbed"
  std::string text;                     // a line for `mtperf testbed status`, no newline
};

// One subcommand of the family's own command (`mtperf GROUP NAME ...`). `run` takes the words
// after NAME and the process's streams; it returns the exit status (0 ok, 1 failed, 2 bad usage).
struct LineCommand {
  std::string name;
  std::string summary;  // one line, for the group's list
  int (*run)(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
             std::ostream& err) = nullptr;
};

// The family's own command: `mtperf GROUP SUB [options]`.
struct LineCommands {
  std::string group;    // the command word: "atm"
  std::string summary;  // its line in `mtperf --help`
  std::vector<LineCommand> subcommands;
};

class LineHook {
 public:
  virtual ~LineHook() = default;

  // Builds a line for one run of `transport` with `adapters` adapter pairs (at least 1) and
  // `options`; throws RequestError (platform/request_error.hpp) naming the option as typed when
  // an option does not parse, std::runtime_error naming the step when the line cannot be built.
  virtual Line build(std::string_view transport, int adapters,
                     const LineOptions& options) const = 0;

  // The line that is up under `name` (check_testbed_name()), checked against the run: a line of
  // another transport, or options that differ from the running line's, throw RequestError saying
  // what to do instead. Nothing when no line of that name is up.
  virtual std::optional<Line> attach(std::string_view transport, const std::string& name,
                                     const LineOptions& options) const = 0;

  // The lines of this family that are up, as their state files in `dir` say (`mtperf testbed
  // status` lists them beside the veth testbeds); and the one named `name`, when it is up (a veth
  // testbed of that name is then refused: it would stand in for the line silently).
  virtual std::vector<LineUp> lines_up(const std::string& dir) const = 0;
  virtual std::optional<LineUp> line_up(const std::string& name) const = 0;

  // Where a run goes, for the report: over the line that is up as `name`, or (no name) over one
  // built for each run.
  virtual std::string where(const std::optional<std::string>& name) const = 0;

  // How the command line spells a line option (the key of LineOptions): "--atm-mtu" for "mtu".
  virtual std::string option_name(std::string_view key) const = 0;

  // The options of `mtperf run` (and of the commands that take run options) that set this
  // line: the command line declares each one, and passes those given by key (LineOptions).
  virtual std::vector<LineOption> run_options() const { return {}; }

  // The family's own command; nullptr for none.
  virtual const LineCommands* commands() const { return nullptr; }
};

}  // namespace mtperf
