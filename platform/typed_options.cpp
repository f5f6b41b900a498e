#include "platform/typed_options.hpp"

#include <bit>
#include <optional>
#include <stdexcept>

#include "platform/number.hpp"
#include "platform/words.hpp"

namespace mtperf {
namespace {

// "a, b or c"
std::string one_of(const std::vector<std::string>& words) {
  std::string s;
  for (size_t i = 0; i < words.size(); ++i)
    s += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + words[i];
  return s;
}

// A bound as a person writes it: a size in K/M/G/T where it is a whole number of them, a count
// of over six digits grouped by thousands (100,000,000).
std::string bound_text(uint64_t n, OptionType type) {
  if (type == OptionType::size && n != 0) {
    const char* units = "KMGT";
    int u = -1;
    while (u < 3 && n % 1024 == 0) {
      n /= 1024;
      ++u;
    }
    return std::to_string(n) + (u < 0 ? "" : std::string(1, units[u]));
  }
  std::string digits = std::to_string(n);
  if (digits.size() <= 6) return digits;
  for (size_t at = digits.size() - 3; at > 0 && at < digits.size(); at -= 3)
    digits.insert(at, ",");
  return digits;
}

}  // namespace

std::string expectation(const OptionInfo& o) {
  std::string range = bound_text(o.lo, o.type) + ".." + bound_text(o.hi, o.type);
  std::string s;
  switch (o.type) {
    case OptionType::text:
      return "any value";
    case OptionType::flag:
      return "0/1/on/off";
    case OptionType::choice:
      return one_of(o.words);
    case OptionType::whole:
      s = "a whole number in " + range;
      break;
    case OptionType::pow2:
      s = "a power of two in " + range + (o.zero_ok ? " or 0" : "");
      break;
    case OptionType::size:
      s = "a size in bytes in " + range + " (K, M, G, T: powers of 1024)";
      break;
  }
  std::vector<std::string> all{s};
  all.insert(all.end(), o.words.begin(), o.words.end());
  return one_of(all);
}

namespace {

std::string resolve_alias(const OptionInfo& o, const std::string& v) {
  for (auto& [alias, word] : o.aliases)
    if (v == alias) return word;
  return v;
}

bool is_word(const OptionInfo& o, const std::string& v) {
  for (auto& w : o.words)
    if (v == w) return true;
  return false;
}

// The value `v` of `o`, or nothing when `o` does not take it.
std::optional<OptionValue> read_value(const OptionInfo& o, const std::string& typed) {
  OptionValue out;
  out.text = resolve_alias(o, typed);
  const std::string& v = out.text;
  if (o.type == OptionType::text) return out;
  if (o.type == OptionType::flag) {
    if (v == "1" || v == "on" || v == "true" || v == "yes") {
      out.on = true;
    } else if (!(v == "0" || v == "off" || v == "false" || v == "no")) {
      return std::nullopt;
    }
    out.text = out.on ? "on" : "off";
    return out;
  }
  if (is_word(o, v)) {
    out.is_word = true;
    return out;
  }
  std::optional<uint64_t> n;
  switch (o.type) {
    case OptionType::whole:
      n = parse_whole(v, o.lo, o.hi);
      break;
    case OptionType::pow2:
      n = parse_whole(v, 0, o.hi);
      if (n && !((*n >= o.lo && std::has_single_bit(*n)) || (o.zero_ok && *n == 0)))
        n = std::nullopt;
      break;
    case OptionType::size:
      n = parse_size(v, o.hi);
      if (n && *n < o.lo) n = std::nullopt;
      break;
    default:
      break;
  }
  if (!n) return std::nullopt;
  out.number = *n;
  return out;
}

}  // namespace

namespace {

OptionInfo typed(std::string key, OptionType type, std::string def, std::string help) {
  OptionInfo o;
  o.key = std::move(key);
  o.type = type;
  o.default_value = std::move(def);
  o.help = std::move(help);
  return o;
}

}  // namespace

OptionInfo flag_option(std::string key, bool def, std::string help) {
  return typed(std::move(key), OptionType::flag, def ? "1" : "0", std::move(help));
}

OptionInfo whole_option(std::string key, uint64_t lo, uint64_t hi, std::string def,
                        std::string help, std::vector<std::string> words) {
  OptionInfo o = typed(std::move(key), OptionType::whole, std::move(def), std::move(help));
  o.lo = lo;
  o.hi = hi;
  o.words = std::move(words);
  return o;
}

OptionInfo pow2_option(std::string key, uint64_t lo, uint64_t hi, uint64_t def, std::string help,
                       bool zero_ok) {
  OptionInfo o = typed(std::move(key), OptionType::pow2, std::to_string(def), std::move(help));
  o.lo = lo;
  o.hi = hi;
  o.zero_ok = zero_ok;
  return o;
}

OptionInfo size_option(std::string key, uint64_t lo, uint64_t hi, std::string def,
                       std::string help) {
  OptionInfo o = typed(std::move(key), OptionType::size, std::move(def), std::move(help));
  o.lo = lo;
  o.hi = hi;
  return o;
}

OptionInfo choice_option(std::string key, std::vector<std::string> words, std::string def,
                         std::string help,
                         std::vector<std::pair<std::string, std::string>> aliases) {
  OptionInfo o = typed(std::move(key), OptionType::choice, std::move(def), std::move(help));
  o.words = std::move(words);
  o.aliases = std::move(aliases);
  return o;
}

const OptionValue& OptionValues::operator[](std::string_view key) const {
  for (auto& [k, v] : values_)
    if (k == key) return v;
  throw std::out_of_range("no option '" + std::string(key) + "' is declared");
}

std::string OptionValues::line() const {
  std::string s;
  for (auto& [k, v] : values_)
    s += (s.empty() ? "" : " ") + k + "=" + v.text;
  return s;
}

// One option's value into `out`: the default where `params` leaves it out; `name` is how an error
// names the option ("ring option ring_size", "option --atm-mtu").
struct OptionReader {
  static void read(const OptionInfo& o, const OptionParams& params, const std::string& name,
                   OptionValues& out) {
    auto given = params.find(o.key);
    const std::string& typed = given == params.end() ? o.default_value : given->second;
    std::optional<OptionValue> v = read_value(o, typed);
    if (!v) {
      if (given == params.end())
        throw std::logic_error(name + ": default '" + typed + "' is not a value it takes");
      throw std::invalid_argument(name + ": expected " + expectation(o) + ", got '" + typed + "'");
    }
    v->given = given != params.end();
    out.values_.emplace_back(o.key, std::move(*v));
  }
};

OptionValues parse_options(std::string_view transport, std::span<const OptionInfo> options,
                           const OptionParams& params) {
  const std::string who(transport);
  std::vector<std::string> keys;
  for (const OptionInfo& o : options)
    keys.push_back(o.key);
  for (auto& [k, v] : params) {
    bool known = false;
    for (const OptionInfo& o : options)
      known |= o.key == k;
    if (known) continue;
    if (keys.empty())
      throw std::invalid_argument(who + " has no option '" + k + "' (it takes none)");
    std::string near = nearest_word(k, keys);
    std::string list;
    for (auto& key : keys)
      list += (list.empty() ? "" : ", ") + key;
    throw std::invalid_argument(who + " has no option '" + k + "'" +
                                (near.empty() ? "" : "; did you mean " + near + "?") +
                                " (it takes " + list + ")");
  }
  OptionValues out;
  for (const OptionInfo& o : options)
    OptionReader::read(o, params, who + " option " + o.key, out);
  return out;
}

OptionValues parse_flag_options(std::span<const FlagOption> flags, const OptionParams& params,
                                const std::function<std::string(const FlagOption&)>& typed) {
  for (auto& [k, v] : params) {
    bool known = false;
    for (const FlagOption& f : flags)
      known |= f.info.key == k;
    if (!known) throw std::logic_error("no flag sets the key '" + k + "'");
  }
  OptionValues out;
  for (const FlagOption& f : flags)
    OptionReader::read(f.info, params, typed ? typed(f) : "option --" + f.flag, out);
  return out;
}

}  // namespace mtperf
