#include "platform/command_line.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <ostream>
#include <sstream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "platform/command_hints.hpp"
#include "platform/netns.hpp"

namespace po = boost::program_options;

namespace mtperf::cli {
namespace {

constexpr size_t kWidth = 100;     // usage lines wrap here
constexpr size_t kNameWidth = 30;  // descriptions start in this column

// An option where it was typed: "-l" and "abc" for `-l abc`, `-labc`; "--len" and "abc" for
// `--len=abc`, `--len abc`.
struct Typed {
  std::string name, value;
};

char short_name(const po::option_description& o) {
  const std::string f = o.format_name();  // "-l [ --length ]" or "--length"
  return f.size() >= 2 && f[0] == '-' && f[1] != '-' ? f[1] : 0;
}

// The option a long spelling stands for, as Boost resolves it (an exact name first, then an
// unambiguous abbreviation); nullptr for none.
const po::option_description* resolve_long(const po::options_description& all,
                                           const std::string& name) {
  try {
    return all.find_nothrow(name, true);
  } catch (const po::error&) {
    return nullptr;  // ambiguous
  }
}

// The first spelling of each declared option on the command line, by long name.
std::map<std::string, Typed> spellings(const po::options_description& all,
                                       const std::vector<std::string>& args) {
  std::map<std::string, Typed> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") break;
    const std::string next = i + 1 < args.size() ? args[i + 1] : "";
    if (a.starts_with("--")) {
      const size_t eq = a.find('=');
      const std::string name = a.substr(2, eq == std::string::npos ? eq : eq - 2);
      if (const auto* o = resolve_long(all, name); o && !out.contains(o->long_name()))
        out[o->long_name()] = {a.substr(0, eq), eq == std::string::npos ? next : a.substr(eq + 1)};
    } else if (a.size() >= 2 && a[0] == '-') {
      for (const auto& o : all.options())
        if (short_name(*o) == a[1] && !out.contains(o->long_name()))
          out[o->long_name()] = {a.substr(0, 2), a.size() > 2 ? a.substr(2) : next};
    }
  }
  return out;
}

template <class T>
bool holds(const po::value_semantic* s) {
  return dynamic_cast<const po::typed_value<T>*>(s) != nullptr;
}

// What a value of the option's type looks like, for an error message.
std::string expected(const po::value_semantic* s) {
  if (holds<double>(s)) return "a number";
  if (holds<int>(s) || holds<int64_t>(s)) return "a whole number";
  if (holds<uint16_t>(s)) return "a whole number in 0..65535";
  if (holds<uint32_t>(s))
    return "a whole number in 0.." + std::to_string(std::numeric_limits<uint32_t>::max());
  if (holds<uint64_t>(s)) return "a whole number >= 0";
  if (holds<bool>(s)) return "true or false";
  return "valid";
}

// The argument's name, its default and its implicit value, taken from Boost's rendering of
// them ("SECONDS (=10)", "[=NAME(=default)]"): Boost keeps the texts given to default_value
// and implicit_value but shows them only through name().
struct ArgText {
  std::string var, def, implicit;
};

ArgText arg_text(const po::value_semantic& s) {
  ArgText t;
  std::string n = s.name();
  if (const size_t d = n.rfind(" (="); d != std::string::npos && n.ends_with(")")) {
    t.def = n.substr(d + 3, n.size() - d - 4);
    n.resize(d);
  }
  if (n.starts_with("[=") && n.ends_with(")]")) {
    const size_t i = n.find("(=");
    t.implicit = n.substr(i + 2, n.size() - i - 4);
    n = n.substr(2, i - 2);
  }
  t.var = n == "arg" ? "VALUE" : n;
  return t;
}

// "  -l, --length SECONDS", "      --testbed [NAME]", "      --allow CIDR...".
std::string option_names(const po::option_description& o) {
  const char c = short_name(o);
  std::string s = c ? std::string("  -") + c + ", --" : "      --";
  s += o.long_name();
  const po::value_semantic& v = *o.semantic();
  if (v.max_tokens() == 0) return s;
  const ArgText t = arg_text(v);
  const std::string var = v.max_tokens() > 1 ? t.var + "..." : t.var;
  return s + (v.min_tokens() == 0 ? " [" + var + "]" : " " + var);
}

std::string option_text(const po::option_description& o) {
  std::string text = o.description();
  if (o.semantic()->max_tokens() == 0) return text;
  const ArgText t = arg_text(*o.semantic());
  if (!t.implicit.empty()) text += " (" + t.var + " when not given: " + t.implicit + ")";
  if (!t.def.empty()) text += " (default " + t.def + ")";
  return text;
}

nlohmann::json option_json(const po::option_description& o) {
  const po::value_semantic& v = *o.semantic();
  const ArgText t = arg_text(v);
  const char c = short_name(o);
  nlohmann::json j = {{"long", o.long_name()},
                      {"short", c ? std::string(1, c) : std::string()},
                      {"help", o.description()},
                      {"takes_value", v.max_tokens() > 0}};
  if (v.max_tokens() > 0) {
    j["arg"] = t.var;
    j["optional_arg"] = v.min_tokens() == 0;
    j["repeats"] = v.max_tokens() > 1;
    j["default"] = t.def;
    j["implicit"] = t.implicit;
  }
  return j;
}

// `text` broken into lines of at most `width` characters at spaces.
std::vector<std::string> wrap(const std::string& text, size_t width) {
  std::vector<std::string> lines(1);
  std::istringstream words(text);
  for (std::string w; words >> w;) {
    if (!lines.back().empty() && lines.back().size() + 1 + w.size() > width) lines.emplace_back();
    lines.back() += (lines.back().empty() ? "" : " ") + w;
  }
  return lines;
}

void print_option(std::ostream& s, const po::option_description& o) {
  std::string names = option_names(o);
  std::vector<std::string> text = wrap(option_text(o), kWidth - kNameWidth);
  if (names.size() + 2 > kNameWidth) {
    s << names << "\n";
    names.clear();
  }
  for (const std::string& line : text) {
    s << names << std::string(kNameWidth - names.size(), ' ') << line << "\n";
    names.clear();
  }
}

// "usage: mtperf NAME SYNOPSIS", the synopsis wrapped under its first word between bracketed
// groups ("[-o FILE]" stays on one line).
std::string usage_line(const CommandSpec& spec) {
  const std::string head = "usage: mtperf " + spec.name;
  std::string synopsis = spec.synopsis;
  int depth = 0;
  for (char& c : synopsis) {
    depth += c == '[' ? 1 : c == ']' ? -1 : 0;
    if (c == ' ' && depth > 0) c = '\x01';
  }
  std::string s = head;
  const std::string indent(head.size() + 1, ' ');
  bool first = true;
  for (std::string line : wrap(synopsis, kWidth - indent.size())) {
    if (line.empty()) continue;
    std::replace(line.begin(), line.end(), '\x01', ' ');
    s += (first ? " " : "\n" + indent) + line;
    first = false;
  }
  return s + "\n";
}

po::options_description everything(const CommandSpec& spec) {
  po::options_description all;
  all.add_options()("help,h", "this help");
  all.add(spec.options).add(spec.hidden);
  return all;
}

std::string hint(const CommandSpec& spec, const std::vector<std::string>& args,
                 const std::string& unknown) {
  if (spec.habits) {
    if (std::string h = habit_hint(args); !h.empty()) return "; " + h;
  }
  std::vector<std::string> known;
  for (const auto& o : spec.options.options())
    known.push_back(o->long_name());
  known.push_back("help");
  const std::string near = unknown.empty() ? "" : closest_option(unknown, known);
  return near.empty() ? "" : "; did you mean --" + near + "?";
}

// Boost's message, with the option as typed (Boost names it by its long name) and the value.
std::string message(const CommandSpec& spec, const po::options_description& all,
                    const std::vector<std::string>& args, const po::error& e) {
  if (const auto* u = dynamic_cast<const po::unknown_option*>(&e))
    return u->what() + hint(spec, args, u->get_option_name());
  const auto* w = dynamic_cast<const po::error_with_option_name*>(&e);
  const std::string canonical = w ? w->get_option_name() : "";
  const po::option_description* o =
      canonical.starts_with("--") ? resolve_long(all, canonical.substr(2)) : nullptr;
  if (o == nullptr) return e.what() + hint(spec, args, "");
  const auto typed = spellings(all, args);
  const auto it = typed.find(o->long_name());
  const Typed where = it == typed.end() ? Typed{canonical, ""} : it->second;
  if (dynamic_cast<const po::validation_error*>(&e))
    return "option " + where.name + ": '" + where.value + "' is not " +
           expected(o->semantic().get());
  if (dynamic_cast<const po::multiple_occurrences*>(&e))
    return "option " + where.name + " is given more than once";
  if (const auto* syntax = dynamic_cast<const po::invalid_command_line_syntax*>(&e)) {
    if (syntax->kind() == po::invalid_syntax::missing_parameter)
      return "option " + where.name + " needs a value (" + arg_text(*o->semantic()).var + ")";
    if (syntax->kind() == po::invalid_syntax::extra_parameter)
      return "option " + where.name + " takes no value";
  }
  return e.what();
}

// The command line with every old spelling (CommandSpec::aliases) written as the option's name
// now, up to "--"; `typed` gets the old spelling of each option that was given by one.
std::vector<std::string> with_aliases_resolved(const CommandSpec& spec,
                                               const std::vector<std::string>& args,
                                               std::map<std::string, std::string>& typed) {
  std::vector<std::string> out = args;
  for (std::string& a : out) {
    if (a == "--") break;
    if (!a.starts_with("--")) continue;
    const size_t eq = a.find('=');
    const std::string name = a.substr(2, eq == std::string::npos ? eq : eq - 2);
    for (const auto& [old_name, now] : spec.aliases) {
      if (name != old_name) continue;
      typed.emplace(now, "--" + old_name);
      a = "--" + now + (eq == std::string::npos ? "" : a.substr(eq));
    }
  }
  return out;
}

}  // namespace

CommandSpec::CommandSpec(std::string name_, std::string synopsis_, std::string summary_)
    : name(std::move(name_)), synopsis(std::move(synopsis_)), summary(std::move(summary_)) {}

bool CommandLine::has(const std::string& long_name) const {
  auto it = vm.find(long_name);
  return it != vm.end() && !it->second.defaulted();
}

std::string CommandLine::typed(const std::string& long_name) const {
  auto it = spelled.find(long_name);
  return it != spelled.end() ? it->second : "--" + long_name;
}

CommandLine parse_command_line(const CommandSpec& spec, const std::vector<std::string>& args) {
  CommandLine cl;
  cl.args = args;
  const auto until_dashes = std::find(args.begin(), args.end(), "--");
  if (std::find(args.begin(), until_dashes, "-h") != until_dashes ||
      std::find(args.begin(), until_dashes, "--help") != until_dashes) {
    cl.help = true;
    return cl;
  }
  const po::options_description all = everything(spec);
  std::map<std::string, std::string> old_spelling;
  const std::vector<std::string> resolved = with_aliases_resolved(spec, args, old_spelling);
  po::parsed_options parsed(&all);
  try {
    po::command_line_parser parser(resolved);
    parser.options(all);
    if (spec.forward_unknown) parser.allow_unregistered();
    po::positional_options_description words;
    if (!spec.positional.empty()) parser.positional(words.add(spec.positional.c_str(), -1));
    parsed = parser.run();
    for (const auto& o : parsed.options) {
      if (o.position_key >= 0 && !spec.forward_unknown && spec.positional.empty())
        throw UsageError("unexpected argument '" + o.original_tokens.front() + "'" +
                         hint(spec, args, ""));
    }
    po::store(parsed, cl.vm);
    po::notify(cl.vm);
  } catch (const po::error& e) {
    std::string m = message(spec, all, resolved, e);
    for (const auto& [now, old_name] : old_spelling)  // named as typed
      if (const size_t at = m.find("option --" + now); at != std::string::npos)
        m.replace(at + 7, now.size() + 2, old_name);
    throw UsageError(m);
  }
  if (spec.forward_unknown)
    cl.rest = po::collect_unrecognized(parsed.options, po::include_positional);
  for (const auto& [name, where] : spellings(all, resolved))
    cl.spelled[name] = where.name;
  for (const auto& [name, old_name] : old_spelling)
    cl.spelled[name] = old_name;
  cl.help = cl.vm.count("help") > 0;
  return cl;
}

std::string usage_text(const CommandSpec& spec) {
  if (help_as_json()) {
    nlohmann::json j = {{"name", spec.name},
                        {"synopsis", spec.synopsis},
                        {"summary", spec.summary},
                        {"about", spec.about},
                        {"positional", spec.positional},
                        {"forward_unknown", spec.forward_unknown},
                        {"options", nlohmann::json::array()},
                        {"aliases", nlohmann::json::array()}};
    j["options"].push_back(option_json(*everything(spec).options().front()));
    for (const auto& o : spec.options.options())
      j["options"].push_back(option_json(*o));
    for (const auto& [old_name, now] : spec.aliases)
      j["aliases"].push_back({{"old", old_name}, {"now", now}});
    return j.dump() + "\n";
  }
  std::ostringstream s;
  s << usage_line(spec);
  for (const std::string& line : wrap(spec.summary, kWidth))
    if (!line.empty()) s << line << "\n";
  s << "options:\n";
  print_option(s, *everything(spec).options().front());
  for (const auto& o : spec.options.options())
    print_option(s, *o);
  if (!spec.aliases.empty()) {
    std::string line = "old spellings, still read:";
    for (size_t i = 0; i < spec.aliases.size(); ++i)
      line += (i ? ", --" : " --") + spec.aliases[i].first + " (--" + spec.aliases[i].second + ")";
    for (const std::string& l : wrap(line, kWidth))
      s << l << "\n";
  }
  if (!spec.about.empty()) s << spec.about;
  return s.str();
}

std::optional<CommandLine> read_command_line(const CommandSpec& spec,
                                             const std::vector<std::string>& args,
                                             std::ostream& out, std::ostream& err, int& exit_code) {
  try {
    CommandLine cl = parse_command_line(spec, args);
    if (!cl.help) return cl;
    out << usage_text(spec);
    exit_code = 0;
  } catch (const UsageError& e) {
    exit_code = usage_error(spec, err, e.what());
  }
  return std::nullopt;
}

bool help_as_json() {
  const char* format = std::getenv("MTPERF_HELP_FORMAT");
  return format != nullptr && std::string_view(format) == "json";
}

int usage_error(const CommandSpec& spec, std::ostream& err, const std::string& what) {
  err << "mtperf " << spec.name << ": " << what << "\n"
      << usage_line(spec) << "('mtperf " << spec.name << " --help' lists the options)\n";
  return kExitUsage;
}

int run_subcommand(const std::string& group, const std::vector<Subcommand>& subs,
                   const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::vector<std::string> names;
  for (const Subcommand& s : subs)
    names.push_back(s.name);
  auto list = [&](std::ostream& to) {
    to << "usage: mtperf " << group << " ";
    for (size_t i = 0; i < names.size(); ++i)
      to << (i ? "|" : "") << names[i];
    to << " [options]\n";
    for (const Subcommand& s : subs)
      to << "  " << s.name << std::string(s.name.size() < 10 ? 10 - s.name.size() : 1, ' ')
         << s.summary << "\n";
    to << "'mtperf " << group << " SUBCOMMAND --help' for a subcommand's options\n";
  };
  if (args.empty()) {
    err << "mtperf " << group << ": missing subcommand\n";
    list(err);
    return kExitUsage;
  }
  const std::string& first = args.front();
  if (first == "-h" || first == "--help" || first == "help") {
    if (help_as_json()) {
      nlohmann::json j = {{"name", group}, {"subcommands", nlohmann::json::array()}};
      for (const Subcommand& s : subs)
        j["subcommands"].push_back({{"name", s.name}, {"summary", s.summary}});
      out << j.dump() << "\n";
      return 0;
    }
    list(out);
    return 0;
  }
  for (const Subcommand& s : subs)
    if (s.name == first) return s.run({args.begin() + 1, args.end()});
  if (first.starts_with("-")) {
    err << "mtperf " << group << ": unrecognised option '" << first
        << "': a subcommand comes first\n";
  } else {
    const std::string near = closest_option(first, names);
    err << "mtperf " << group << ": unknown subcommand '" << first << "'"
        << (near.empty() ? "" : "; did you mean '" + near + "'?") << "\n";
  }
  list(err);
  return kExitUsage;
}

std::string flag_help(const FlagOption& f, const std::string& prefix) {
  const OptionType t = f.info.type;
  const bool number = t == OptionType::whole || t == OptionType::pow2 || t == OptionType::size;
  return prefix + f.info.help + (number ? "; takes " + expectation(f.info) : "");
}

void add_flag_options(po::options_description_easy_init& add, std::span<const FlagOption> flags,
                      const std::string& prefix) {
  for (const FlagOption& f : flags) {
    auto* value = po::value<std::string>()->value_name(f.value_name);
    if (!f.info.default_value.empty())
      value->default_value(f.info.default_value, f.info.default_value);
    add(f.flag.c_str(), value, flag_help(f, prefix).c_str());
  }
}

OptionParams given_flags(const po::variables_map& vm, std::span<const FlagOption> flags) {
  OptionParams given;
  for (const FlagOption& f : flags)
    if (vm.count(f.flag) && !vm[f.flag].defaulted())
      given[f.info.key] = vm[f.flag].as<std::string>();
  return given;
}

std::vector<std::string> split_list(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

void add_testbed_name(CommandSpec& spec) {
  spec.options.add_options()(
      "name", po::value<std::string>()->default_value("default", "default")->value_name("NAME"),
      "the testbed's name, [a-z0-9_-]{1,32}");
}

void add_testbed_state_dir(CommandSpec& spec) {
  spec.hidden.add_options()(
      "state-dir", po::value<std::string>()->default_value(kTestbedStateDir, "/run/mtperf"),
      "where the state files are");
}

}  // namespace mtperf::cli
