#pragma once
// The one grammar of --check, for `mtperf run` and `mtperf fleet` alike: a comma-separated list
// of terms
//   SUBJECT OP BOUND
// OP one of < <= > >= == !=; BOUND a number (a sign allowed) with an optional suffix k K m M g G
// t T (powers of 1000, platform/number.hpp's rate units), or, where the caller allows references,
// REF or F*REF (fleet: max, min, median of the pairs' figure). Each caller checks its subjects;
// this parses and compares, and its errors name the term.
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mtperf {

enum class CheckOp { lt, le, gt, ge, eq, ne };

struct CheckTerm {
  std::string text;     // as written, trimmed
  std::string subject;  // before the operator, trimmed
  CheckOp op = CheckOp::le;
  double value = 0;  // the bound; with a reference, its factor
  std::string ref;   // "" for a plain number, else one of the caller's references
};

// Parses the list; `refs` are the references a bound may name (none: numbers only). Throws
// std::invalid_argument naming the term and what is wrong with it (no operator, no bound, not a
// number, an unknown reference, an empty term).
std::vector<CheckTerm> parse_check_terms(std::string_view list,
                                         std::span<const std::string_view> refs = {});

bool check_holds(double measured, CheckOp op, double bound);
std::string_view to_string(CheckOp op);
// The operator that fails a check: "<" for a failed >=, ... (for "8.1G < 8.6G").
std::string_view failing(CheckOp op);

}  // namespace mtperf
