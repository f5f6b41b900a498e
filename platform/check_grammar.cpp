#include "platform/check_grammar.hpp"

#include <stdexcept>

#include "platform/number.hpp"
#include "platform/text.hpp"

namespace mtperf {
namespace {

struct OpName {
  std::string_view text;
  CheckOp op;
};
// Two-character operators first, so that "<=" is not read as "<" followed by "=".
constexpr OpName kOps[] = {{"<=", CheckOp::le}, {">=", CheckOp::ge}, {"==", CheckOp::eq},
                           {"!=", CheckOp::ne}, {"<", CheckOp::lt},  {">", CheckOp::gt}};

double number(std::string_view text, const std::string& term) {
  const bool negative = !text.empty() && text.front() == '-';
  auto v = parse_scaled(negative ? text.substr(1) : text, kRateUnits);
  if (!v)
    throw std::invalid_argument("check '" + term + "': '" + std::string(text) +
                                "' is not a number (a k, M, G or T suffix is allowed)");
  return negative ? -*v : *v;
}

void bound(CheckTerm& t, std::string_view rhs, std::span<const std::string_view> refs) {
  if (rhs.empty())
    throw std::invalid_argument("check '" + t.text + "': no value after the operator");
  const size_t star = rhs.find('*');
  const std::string_view ref = trim(star == std::string_view::npos ? rhs : rhs.substr(star + 1));
  for (std::string_view r : refs) {
    if (r != ref) continue;
    t.ref = std::string(r);
    t.value = star == std::string_view::npos ? 1 : number(trim(rhs.substr(0, star)), t.text);
    return;
  }
  if (star != std::string_view::npos) {
    std::string names;
    for (size_t i = 0; i < refs.size(); ++i)
      names += (i == 0 ? "" : i + 1 == refs.size() ? " or " : ", ") + std::string(refs[i]);
    throw std::invalid_argument("check '" + t.text + "': F*REF takes " +
                                (names.empty() ? std::string("no reference here") : names));
  }
  t.value = number(rhs, t.text);
}

CheckTerm parse_term(std::string_view s, std::span<const std::string_view> refs) {
  CheckTerm t;
  t.text = std::string(trim(s));
  const std::string_view text = t.text;
  for (const OpName& o : kOps) {
    const size_t at = text.find(o.text);
    if (at == std::string_view::npos) continue;
    t.op = o.op;
    t.subject = std::string(trim(text.substr(0, at)));
    bound(t, trim(text.substr(at + o.text.size())), refs);
    return t;
  }
  throw std::invalid_argument("check '" + t.text +
                              "': no comparison (FIGURE OP VALUE, OP one of < <= > >= == !=)");
}

}  // namespace

std::vector<CheckTerm> parse_check_terms(std::string_view list,
                                         std::span<const std::string_view> refs) {
  std::vector<CheckTerm> out;
  const std::string whole(list);
  for (;;) {
    const size_t comma = list.find(',');
    const std::string_view part = trim(list.substr(0, comma));
    if (part.empty()) throw std::invalid_argument("an empty check in '" + whole + "'");
    out.push_back(parse_term(part, refs));
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return out;
}

bool check_holds(double v, CheckOp op, double limit) {
  switch (op) {
    case CheckOp::lt:
      return v < limit;
    case CheckOp::le:
      return v <= limit;
    case CheckOp::gt:
      return v > limit;
    case CheckOp::ge:
      return v >= limit;
    case CheckOp::eq:
      return v == limit;
    case CheckOp::ne:
      return v != limit;
  }
  return false;
}

std::string_view to_string(CheckOp op) {
  for (const OpName& o : kOps)
    if (o.op == op) return o.text;
  return "?";
}

std::string_view failing(CheckOp op) {
  switch (op) {
    case CheckOp::lt:
      return ">=";
    case CheckOp::le:
      return ">";
    case CheckOp::gt:
      return "<=";
    case CheckOp::ge:
      return "<";
    case CheckOp::eq:
      return "!=";
    case CheckOp::ne:
      return "==";
  }
  return "?";
}

}  // namespace mtperf
