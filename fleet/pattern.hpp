#pragma once
// Fleet patterns: which ranks measure which, round by round. Pure functions of the fleet's size
// (and, for a pair file, of the roster's host names); nothing here talks to the network.
//
// A pair is ordered: `src` runs the client side of the test (the sender of a stream), `dst` the
// server side, so a cell of an N x N matrix is [src][dst]. A round is what may run at once;
// within a round of a `disjoint` plan no rank is in two pairs. A plan with `both_directions`
// runs each pair of a round twice, as given and then reversed, so that the unordered pairs of the
// circle method fill both cells of the matrix.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mtperf::fleet {

struct Pair {
  uint32_t src = 0, dst = 0;
  bool operator==(const Pair&) const = default;
};

struct Round {
  std::vector<Pair> pairs;
};

struct Plan {
  std::string pattern;           // "all-pairs", "shift", "incast:4", "pairs FILE", ...
  bool disjoint = false;         // no rank in two pairs of one round
  bool both_directions = false;  // each pair also runs reversed, right after
  std::vector<Round> rounds;
  // Ordered pairs the plan measures, reversed ones included.
  size_t ordered_pairs() const;
};

// The largest fleet a plan is made for (64 Ki ranks; all-pairs then has 2^31 pairs, so the
// callers bound N further by what they can run).
inline constexpr uint32_t kMaxRanks = 65536;

// "all-pairs" | "shift" | "incast:K" | "one-to-many:K" | "bisection" for n ranks. Throws
// std::invalid_argument naming the pattern and what is wrong (unknown name, K out of 1..n-1,
// n < 2, an odd n for bisection).
Plan make_plan(std::string_view pattern, uint32_t n);
// The checks of make_plan that need no size (the name, K's form), for the command line; it
// also accepts the patterns of groups (fleet/group_plan.hpp), which make_plan does not make.
void check_pattern(std::string_view pattern);

// The circle method: n-1 rounds (n even; n rounds for odd n, one rank idle in each) of
// floor(n/2) disjoint unordered pairs, every unordered pair exactly once; both directions.
Plan all_pairs(uint32_t n);
// mpiGraph's: in round d (1..n-1) every rank r sends to (r+d) mod n, all at once.
Plan shift(uint32_t n);
// Round r: the k ranks after r send to r at once (incast), or r sends to them (one_to_many).
Plan incast(uint32_t n, uint32_t k);
Plan one_to_many(uint32_t n, uint32_t k);
// One round: rank i and rank i + n/2 for i < n/2; both directions. n even.
Plan bisection(uint32_t n);

// ClusterKit's pair file: one "<round> <a> <b>" line per pair (a sends, b receives), '#' starts a
// comment, blank lines are skipped; a and b are ranks or host names from `hosts` (index = rank).
// Rounds are kept in the order of their numbers. Throws std::invalid_argument naming the line.
Plan parse_pairs(std::string_view text, const std::vector<std::string>& hosts,
                 std::string_view name = "pairs");

// One thing the coordinator runs at once: the ordered pairs of a round (or one pair of it, when
// pairs run isolated), on one transport.
struct Step {
  uint32_t round = 0;
  uint32_t transport = 0;  // index into the fleet's transports
  std::vector<Pair> pairs;
};

enum class Concurrency { round, isolated };
std::string_view to_string(Concurrency c);

// The plan as steps: round by round; in each round every transport in turn (in the given order
// on even rounds, reversed on odd ones, so a drift of the fabric's load falls on all alike);
// with `isolated` one pair per step.
std::vector<Step> schedule(const Plan& plan, uint32_t transports, Concurrency c);

}  // namespace mtperf::fleet
