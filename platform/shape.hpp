#pragma once
// Fixed-form names (PCI addresses, /sys and /proc entries, testbed names, `ip link` fields)
// checked by their shape: what a std::regex says of these few patterns, without <regex>, whose
// templates cost each file that includes it about 5 s of compilation. Pure; no I/O.
#include <algorithm>
#include <string_view>

namespace mtperf::shape {

inline bool digit(char c) {
  return c >= '0' && c <= '9';
}
inline bool lower_hex(char c) {
  return digit(c) || (c >= 'a' && c <= 'f');
}
inline bool lower_alpha(char c) {
  return c >= 'a' && c <= 'z';
}

// Non-empty and every character passes `pred`.
template <class Pred>
bool all(std::string_view s, Pred pred) {
  return !s.empty() && std::all_of(s.begin(), s.end(), pred);
}

// Each character of `form` stands for one of `s`: 'x' a lower-case hex digit, '9' a decimal
// digit, '7' an octal digit; any other character for itself. "xxxx:xx:xx.7" is a PCI address.
inline bool fits(std::string_view s, std::string_view form) {
  if (s.size() != form.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool ok = form[i] == 'x'   ? lower_hex(c)
              : form[i] == '9' ? digit(c)
              : form[i] == '7' ? c >= '0' && c <= '7'
                               : c == form[i];
    if (!ok) return false;
  }
  return true;
}

// A name of 1..max characters from a-z, 0-9, '_' and '-'.
inline bool plain_name(std::string_view s, size_t max) {
  return s.size() <= max &&
         all(s, [](char c) { return lower_alpha(c) || digit(c) || c == '_' || c == '-'; });
}

}  // namespace mtperf::shape
