#include "fleet/pattern.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "platform/number.hpp"
#include "platform/text.hpp"

namespace mtperf::fleet {
namespace {

[[noreturn]] void bad(std::string_view pattern, const std::string& why) {
  throw std::invalid_argument("pattern " + std::string(pattern) + ": " + why);
}

void need_ranks(std::string_view pattern, uint32_t n, uint32_t at_least) {
  if (n < at_least)
    bad(pattern, "needs at least " + std::to_string(at_least) + " ranks, the fleet has " +
                     std::to_string(n));
  if (n > kMaxRanks)
    bad(pattern, std::to_string(n) + " ranks, at most " + std::to_string(kMaxRanks));
}

uint32_t parse_k(std::string_view pattern, std::string_view text, uint32_t n) {
  const auto whole = parse_whole(text, 0, UINT32_MAX);
  if (!whole) bad(pattern, "K must be a whole number, not '" + std::string(text) + "'");
  const uint32_t k = uint32_t(*whole);
  if (k < 1 || k >= n)
    bad(pattern, "K = " + std::to_string(k) + " must be in 1.." + std::to_string(n - 1) + " for " +
                     std::to_string(n) + " ranks");
  return k;
}

}  // namespace

size_t Plan::ordered_pairs() const {
  size_t n = 0;
  for (const Round& r : rounds)
    n += r.pairs.size();
  return both_directions ? 2 * n : n;
}

Plan all_pairs(uint32_t n) {
  need_ranks("all-pairs", n, 2);
  // Circle method: m positions (n rounded up to even; position m-1 is a bye for odd n). Position
  // 0 stays, the others rotate one place a round; position i meets position m-1-i.
  const uint32_t m = n + (n & 1);
  Plan p{"all-pairs", true, true, {}};
  p.rounds.resize(m - 1);
  std::vector<uint32_t> at(m);
  for (uint32_t i = 0; i < m; ++i)
    at[i] = i;
  for (uint32_t r = 0; r + 1 < m; ++r) {
    auto& pairs = p.rounds[r].pairs;
    pairs.reserve(m / 2);
    for (uint32_t i = 0; i < m / 2; ++i) {
      uint32_t a = at[i], b = at[m - 1 - i];
      if (a >= n || b >= n) continue;  // the bye
      pairs.push_back({std::min(a, b), std::max(a, b)});
    }
    std::rotate(at.begin() + 1, at.end() - 1, at.end());
  }
  return p;
}

Plan shift(uint32_t n) {
  need_ranks("shift", n, 2);
  Plan p{"shift", false, false, {}};
  p.rounds.resize(n - 1);
  for (uint32_t d = 1; d < n; ++d) {
    auto& pairs = p.rounds[d - 1].pairs;
    pairs.reserve(n);
    for (uint32_t r = 0; r < n; ++r)
      pairs.push_back({r, (r + d) % n});
  }
  return p;
}

namespace {
Plan fan(std::string name, uint32_t n, uint32_t k, bool into) {
  Plan p{std::move(name), false, false, {}};
  p.rounds.resize(n);
  for (uint32_t r = 0; r < n; ++r) {
    for (uint32_t j = 1; j <= k; ++j) {
      uint32_t other = (r + j) % n;
      p.rounds[r].pairs.push_back(into ? Pair{other, r} : Pair{r, other});
    }
  }
  return p;
}
}  // namespace

Plan incast(uint32_t n, uint32_t k) {
  std::string name = "incast:" + std::to_string(k);
  need_ranks(name, n, 2);
  if (k < 1 || k >= n) bad(name, "K must be in 1.." + std::to_string(n - 1));
  return fan(name, n, k, true);
}

Plan one_to_many(uint32_t n, uint32_t k) {
  std::string name = "one-to-many:" + std::to_string(k);
  need_ranks(name, n, 2);
  if (k < 1 || k >= n) bad(name, "K must be in 1.." + std::to_string(n - 1));
  return fan(name, n, k, false);
}

Plan bisection(uint32_t n) {
  need_ranks("bisection", n, 2);
  if (n % 2) bad("bisection", "needs an even number of ranks, the fleet has " + std::to_string(n));
  Plan p{"bisection", true, true, {}};
  p.rounds.resize(1);
  for (uint32_t i = 0; i < n / 2; ++i)
    p.rounds[0].pairs.push_back({i, i + n / 2});
  return p;
}

Plan make_plan(std::string_view pattern, uint32_t n) {
  if (pattern == "all-pairs") return all_pairs(n);
  if (pattern == "shift") return shift(n);
  if (pattern == "bisection") return bisection(n);
  const size_t colon = pattern.find(':');
  const std::string_view head = pattern.substr(0, colon);
  if (head == "incast" || head == "one-to-many") {
    if (colon == std::string_view::npos)
      bad(pattern, "give K, the number of senders or receivers: " + std::string(head) + ":K");
    need_ranks(pattern, n, 2);
    uint32_t k = parse_k(pattern, pattern.substr(colon + 1), n);
    return head == "incast" ? incast(n, k) : one_to_many(n, k);
  }
  bad(pattern,
      "unknown; one of all-pairs, shift, incast:K, one-to-many:K, bisection, within-group, "
      "across-groups, rail");
}

void check_pattern(std::string_view pattern) {
  const std::string_view head = pattern.substr(0, pattern.find(':'));
  if (pattern == "all-pairs" || pattern == "shift" || pattern == "bisection") return;
  if (pattern == "within-group" || pattern == "across-groups" || pattern == "rail") return;
  if (head != "incast" && head != "one-to-many")
    bad(pattern,
        "unknown; one of all-pairs, shift, incast:K, one-to-many:K, bisection, within-group, "
        "across-groups, rail");
  const size_t colon = pattern.find(':');
  if (colon == std::string_view::npos)
    bad(pattern, "give K, the number of senders or receivers: " + std::string(head) + ":K");
  parse_k(pattern, pattern.substr(colon + 1), kMaxRanks);
}

Plan parse_pairs(std::string_view text, const std::vector<std::string>& hosts,
                 std::string_view name) {
  const uint32_t n = uint32_t(hosts.size());
  std::map<uint64_t, Round> rounds;
  size_t line_no = 0, pairs = 0;
  auto rank_of = [&](std::string_view word, const std::string& where) -> uint32_t {
    if (const auto whole = parse_whole(word, 0, UINT32_MAX)) {
      const uint64_t r = *whole;
      if (r >= n)
        throw std::invalid_argument(where + ": rank " + std::string(word) + " is not in 0.." +
                                    std::to_string(n - 1));
      return uint32_t(r);
    }
    auto it = std::find(hosts.begin(), hosts.end(), word);
    if (it == hosts.end())
      throw std::invalid_argument(where + ": '" + std::string(word) +
                                  "' is neither a rank nor a host of the fleet");
    return uint32_t(it - hosts.begin());
  };
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    ++line_no;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    const std::vector<std::string_view> words = split_words(line);
    if (words.empty()) continue;
    const std::string where = std::string(name) + " line " + std::to_string(line_no);
    if (words.size() != 3)
      throw std::invalid_argument(where + ": expected '<round> <a> <b>', got " +
                                  std::to_string(words.size()) + " words");
    const auto whole_round = parse_whole(words[0]);
    if (!whole_round)
      throw std::invalid_argument(where + ": round '" + std::string(words[0]) +
                                  "' is not a whole number");
    Pair p{rank_of(words[1], where), rank_of(words[2], where)};
    if (p.src == p.dst)
      throw std::invalid_argument(where + ": a pair of rank " + std::to_string(p.src) +
                                  " with itself");
    if (++pairs > size_t(kMaxRanks) * 64)
      throw std::invalid_argument(where + ": more than " + std::to_string(size_t(kMaxRanks) * 64) +
                                  " pairs");
    rounds[*whole_round].pairs.push_back(p);
  }
  if (pairs == 0) throw std::invalid_argument(std::string(name) + ": no pair in it");
  Plan plan{"pairs " + std::string(name), true, false, {}};
  for (auto& [_, r] : rounds) {
    std::vector<uint32_t> seen;
    for (const Pair& p : r.pairs) {
      seen.push_back(p.src);
      seen.push_back(p.dst);
    }
    std::sort(seen.begin(), seen.end());
    if (std::adjacent_find(seen.begin(), seen.end()) != seen.end()) plan.disjoint = false;
    plan.rounds.push_back(std::move(r));
  }
  return plan;
}

std::string_view to_string(Concurrency c) {
  switch (c) {
    case Concurrency::round:
      return "round";
    case Concurrency::isolated:
      return "isolated";
  }
  return "?";
}

std::vector<Step> schedule(const Plan& plan, uint32_t transports, Concurrency c) {
  std::vector<Step> steps;
  for (uint32_t r = 0; r < plan.rounds.size(); ++r) {
    const auto& pairs = plan.rounds[r].pairs;
    std::vector<Pair> reversed;
    if (plan.both_directions)
      for (const Pair& p : pairs)
        reversed.push_back({p.dst, p.src});
    for (uint32_t i = 0; i < transports; ++i) {
      const uint32_t t = r % 2 == 0 ? i : transports - 1 - i;
      if (c == Concurrency::round) {
        steps.push_back({r, t, pairs});
        if (plan.both_directions) steps.push_back({r, t, reversed});
        continue;
      }
      for (size_t k = 0; k < pairs.size(); ++k) {
        steps.push_back({r, t, {pairs[k]}});
        if (plan.both_directions) steps.push_back({r, t, {reversed[k]}});
      }
    }
  }
  return steps;
}

}  // namespace mtperf::fleet
