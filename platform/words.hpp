#pragma once
// The word a user most likely meant: for the "did you mean" of a mistyped option, command or -O
// key. Pure; no I/O.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace mtperf {

// Edits (insert, delete, replace, or a swap of two neighbours, as in "lenght") from a to b.
inline size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    prev[j] = j;
  std::vector<size_t> before(b.size() + 1);  // the row above prev, for swaps
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        cur[j] = std::min(cur[j], before[j - 2] + 1);
    }
    before.swap(prev);
    prev.swap(cur);
  }
  return prev[b.size()];
}

// The known word nearest `typed` when it is near enough to be a typo (at most a quarter of its
// letters, at least two, wrong), or "" — also for words under three letters.
template <class Words>
std::string nearest_word(std::string_view typed, const Words& known) {
  if (typed.size() < 2) return "";
  std::string best;
  // Two letters ("rn") are one edit from what was meant, or too far from anything to guess.
  size_t best_d = typed.size() < 3 ? 2 : std::max<size_t>(2, typed.size() / 4) + 1;
  for (const auto& k : known) {
    size_t d = edit_distance(typed, k);
    if (d < best_d) {
      best_d = d;
      best = std::string(k);
    }
  }
  return best;
}

}  // namespace mtperf
