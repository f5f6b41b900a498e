#pragma once
// Typed options: each key says what it takes (on/off, a whole number in a range, a power of two, a
// size, one of some words, or any text), its default and its help. One parser reads every
// transport's -O KEY=VALUE pairs and the flags of a line (--atm-mtu BYTES, FlagOption) against
// such lists: an unknown key is refused with a "did you mean", a value outside what the key takes
// with the option as typed and what it takes. `mtperf transports`, --help and the man pages print
// the same lists. Set-up path only.
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mtperf {

// Options as given, "key" -> "value" (a transport's: TransportParams, carried in the test request
// so that the server uses the same settings).
using OptionParams = std::map<std::string, std::string>;
using TransportParams = OptionParams;

enum class OptionType : uint8_t {
  text,    // any value
  flag,    // 1/0, on/off, true/false, yes/no
  whole,   // a whole number in lo..hi
  pow2,    // a power of two in lo..hi (or 0 where zero_ok)
  size,    // bytes, with K/M/G suffixes (powers of 1024), in lo..hi
  choice,  // one of `words`
};

struct OptionInfo {
  std::string key;
  std::string default_value;  // as `mtperf transports` prints it
  std::string help;
  OptionType type = OptionType::text;
  uint64_t lo = 0, hi = 0;  // whole, pow2, size
  bool zero_ok = false;     // pow2: 0 is taken too
  // choice: the values taken. whole, pow2, size: words taken instead of a number ("auto").
  std::vector<std::string> words = {};
  // Other spellings of a word: {"1", "on"} reads "1" as "on".
  std::vector<std::pair<std::string, std::string>> aliases = {};
};

OptionInfo flag_option(std::string key, bool def, std::string help);
OptionInfo whole_option(std::string key, uint64_t lo, uint64_t hi, std::string def,
                        std::string help, std::vector<std::string> words = {});
OptionInfo pow2_option(std::string key, uint64_t lo, uint64_t hi, uint64_t def, std::string help,
                       bool zero_ok = false);
OptionInfo size_option(std::string key, uint64_t lo, uint64_t hi, std::string def,
                       std::string help);
OptionInfo choice_option(std::string key, std::vector<std::string> words, std::string def,
                         std::string help,
                         std::vector<std::pair<std::string, std::string>> aliases = {});

// One key's value after parsing: the default where -O left it out.
struct OptionValue {
  bool given = false;  // on the command line
  bool on = false;     // flag
  bool is_word = false;
  uint64_t number = 0;  // whole, pow2, size (when not a word)
  std::string text;     // as given, aliases resolved; flags "on"/"off"
};

class OptionValues {
 public:
  // The value of a declared key (std::out_of_range for a key the list does not declare: a
  // transport's own mistake).
  const OptionValue& operator[](std::string_view key) const;
  bool on(std::string_view key) const { return (*this)[key].on; }
  uint64_t number(std::string_view key) const { return (*this)[key].number; }
  const std::string& text(std::string_view key) const { return (*this)[key].text; }
  // "key=value" of every key, in the order declared, space-separated: the settings a test ran
  // with as -O would write them.
  std::string line() const;

 private:
  friend OptionValues parse_options(std::string_view, std::span<const OptionInfo>,
                                    const OptionParams&);
  friend struct OptionReader;
  std::vector<std::pair<std::string, OptionValue>> values_;
};

// Reads `params` against `options` (defaults for the keys left out). Throws std::invalid_argument:
//   "<transport> has no option 'ring_sise'; did you mean ring_size? (it takes ring_size, ...)"
//   "<transport> option ring_size: expected a power of two in 8..32768, got '7'"
OptionValues parse_options(std::string_view transport, std::span<const OptionInfo> options,
                           const OptionParams& params);

// An option a command line spells as a flag of its own (a line's `--atm-mtu BYTES`), typed as a
// -O key is: info.key is the key it sets, info.default_value and info.help what --help shows.
struct FlagOption {
  OptionInfo info;
  std::string flag;        // "atm-mtu", without the dashes
  std::string value_name;  // "BYTES", for --help
};

// Reads `params` (keys of `flags`, as given; a key no flag declares is the caller's mistake,
// std::logic_error) against their options, defaults for those left out. Throws
// std::invalid_argument naming the flag: "option --atm-mtu: expected a whole number in
// 68..65527 or 0, got '20'".
// `typed`, where given, names a flag as the user spelled it ("option --rate" for an alias).
OptionValues parse_flag_options(
    std::span<const FlagOption> flags, const OptionParams& params,
    const std::function<std::string(const FlagOption&)>& typed = nullptr);

// What `o` takes, in words ("a whole number in 68..65527 or 0"), for --help and errors.
std::string expectation(const OptionInfo& o);

}  // namespace mtperf
