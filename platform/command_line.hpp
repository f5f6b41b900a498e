#pragma once
// The command line of every mtperf command and subcommand, read one way: Boost.Program_options
// underneath, -h/--help on each, a usage text that gives each option's argument and default as a
// person writes them ("-l, --length SECONDS  measured window (default 10)"), and errors that name
// the option as the user typed it ("-l", "--len") and the value as typed.
//
// Options are declared with a value_name and, where there is a default, its text:
//   po::value<double>()->default_value(0.1, "0.1")->value_name("SECONDS")
// (without the text Boost prints 0.10000000000000001). A default that the code supplies (it
// depends on other options) is said in the description instead: "... (default 9180 CLIP, 1500
// LANE)".
//
// Exit status of every command (cli/commands.hpp): 0 ok, 1 failed, 2 bad usage (kExitUsage),
// 130 interrupted.
//
// It lives below every layer that has commands: cli/ and the commands a transport family brings
// with its line (transports/api/line.hpp, e.g. `mtperf atm up`) read their words the same way.
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <boost/program_options.hpp>

#include "platform/request_error.hpp"
#include "platform/typed_options.hpp"

namespace mtperf::cli {

inline constexpr int kExitUsage = 2;

// A command line that does not parse or does not make sense; the message names the option as
// typed. The command prints "mtperf COMMAND: <message>" and exits with kExitUsage. The run
// layer's RequestError (a request found impossible once the hosts are known) is the same thing.
using UsageError = RequestError;

// One command or subcommand. -h/--help is added to `options` by the parser and the usage.
struct CommandSpec {
  CommandSpec(std::string name, std::string synopsis, std::string summary);

  std::string name;      // the words after "mtperf": "atm up"
  std::string synopsis;  // after "usage: mtperf NAME"; "" when it takes nothing
  std::string summary;   // one line under the usage line
  std::string about;     // printed after the options; "" for nothing
  boost::program_options::options_description options;  // listed by --help
  boost::program_options::options_description hidden;   // accepted, not listed (tests' hooks)
  // Options and words it does not declare go to CommandLine::rest, in order (sweep passes them
  // to every run); otherwise they are errors.
  bool forward_unknown = false;
  // The long name of a hidden option (a std::vector<std::string>) that takes the words that are
  // not options, in order ("FILE..."); "" when the command takes none.
  std::string positional;
  // Errors translate netperf/iperf3 habits ("-t TCP_RR is -w rr here"), for run and sweep.
  bool habits = false;
  // Old long spellings still read, each as the option it was renamed to: {"bind", "pin"} reads
  // `--bind irq` as `--pin irq`. Errors name the spelling typed; the usage lists them.
  std::vector<std::pair<std::string, std::string>> aliases;
};

struct CommandLine {
  boost::program_options::variables_map vm;
  bool help = false;                           // -h/--help: nothing else was checked
  std::vector<std::string> rest;               // forward_unknown: what was not this command's
  std::vector<std::string> args;               // as given
  std::map<std::string, std::string> spelled;  // long name -> as typed, for typed()

  // Given on the command line (not a default).
  bool has(const std::string& long_name) const;
  template <class T>
  T get(const std::string& long_name) const {
    return vm[long_name].as<T>();
  }
  // The option as the user typed it: "-l", "--len", "--length"; "--LONG_NAME" when not given.
  std::string typed(const std::string& long_name) const;
};

// Throws UsageError. -h/--help anywhere sets `help` and nothing else is checked.
CommandLine parse_command_line(const CommandSpec& spec, const std::vector<std::string>& args);

// "usage: mtperf NAME SYNOPSIS", the summary, then one entry per option: its names, argument,
// description and default.
std::string usage_text(const CommandSpec& spec);

// MTPERF_HELP_FORMAT=json in the environment: usage_text() (so every --help) returns the command's
// description as one JSON object instead of the text: {"name", "synopsis", "summary", "about",
// "positional", "forward_unknown", "options": [{"long", "short", "help", "takes_value", and for an
// option that takes a value "arg", "optional_arg", "repeats", "default", "implicit"}], "aliases":
// [{"old", "now"}]}; run_subcommand's list is {"name", "subcommands": [{"name", "summary"}]}. The
// man pages and the bash completion are generated from it at build time (packaging/gen_docs.py),
// so they say what --help says. For the build, not for people: the usage text is the interface.
bool help_as_json();

// parse_command_line at a command's entry. On --help prints the usage to `out` and sets
// exit_code 0; on a usage error prints it to `err` (usage_error) and sets exit_code 2; returns
// nullopt in both cases.
std::optional<CommandLine> read_command_line(const CommandSpec& spec,
                                             const std::vector<std::string>& args,
                                             std::ostream& out, std::ostream& err, int& exit_code);

// Prints "mtperf NAME: what" and the usage line to `err`; returns kExitUsage.
int usage_error(const CommandSpec& spec, std::ostream& err, const std::string& what);

// Flags typed as -O keys are (typed_options.hpp): each declared with its value name, its default
// and `prefix` before its help, which ends with what it takes ("; takes a whole number in
// 68..65527 or 0") where that is a number. given_flags: those given (not defaulted), by key.
void add_flag_options(boost::program_options::options_description_easy_init& add,
                      std::span<const FlagOption> flags, const std::string& prefix = "");
OptionParams given_flags(const boost::program_options::variables_map& vm,
                         std::span<const FlagOption> flags);
// A flag's help as add_flag_options writes it.
std::string flag_help(const FlagOption& f, const std::string& prefix = "");

// "a,b,,c" -> {"a", "b", "c"}: a list option's items, empty ones dropped.
std::vector<std::string> split_list(const std::string& text, char sep = ',');

// A command made of subcommands (atm, testbed): `mtperf GROUP SUB [options]`.
struct Subcommand {
  std::string name;
  std::string summary;
  std::function<int(const std::vector<std::string>&)> run;  // the words after SUB
};

// Runs the subcommand args[0] names with the words after it. -h/--help (or nothing) lists the
// subcommands (exit 0, or 2 when nothing was given); an unknown one is a usage error with a
// "did you mean".
int run_subcommand(const std::string& group, const std::vector<Subcommand>& subs,
                   const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// The options every testbed command shares (`mtperf testbed`, `mtperf atm`): --name NAME
// (default "default"), and the hidden --state-dir DIR (tests).
void add_testbed_name(CommandSpec& spec);
void add_testbed_state_dir(CommandSpec& spec);

}  // namespace mtperf::cli
