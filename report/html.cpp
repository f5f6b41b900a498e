#include "report/html.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "report/html_parts.hpp"
#include "report/svg.hpp"

namespace mtperf {

namespace html {

namespace {

const Json& null_json() {
  static const Json null;
  return null;
}

const Json& empty_array() {
  static const Json empty = Json::array();
  return empty;
}

// Drops the zeros after a decimal point that fixed formatting leaves: "2.50" -> "2.5".
std::string trim_zeros(std::string s) {
  if (s.find('.') == std::string::npos) return s;
  while (s.back() == '0')
    s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

const Json& at(const Json& j, std::string_view key) {
  if (!j.is_object()) return null_json();
  const auto it = j.find(key);
  return it == j.end() ? null_json() : *it;
}

std::optional<double> number(const Json& j, std::string_view key) {
  const Json& v = at(j, key);
  if (!v.is_number()) return std::nullopt;
  const double d = v.get<double>();
  return std::isfinite(d) ? std::optional<double>(d) : std::nullopt;
}

std::string text(const Json& j, std::string_view key) {
  const Json& v = at(j, key);
  return v.is_string() ? v.get<std::string>() : "";
}

const Json& array(const Json& j, std::string_view key) {
  const Json& v = at(j, key);
  return v.is_array() ? v : empty_array();
}

Unit bps_unit(double largest) {
  if (largest >= 1e9) return {1e9, "Gbit/s"};
  if (largest >= 1e6) return {1e6, "Mbit/s"};
  if (largest >= 1e3) return {1e3, "kbit/s"};
  return {1, "bit/s"};
}

std::string dash() {
  return "\u2013";
}

std::string fixed(std::optional<double> v, int decimals) {
  if (!v || !std::isfinite(*v)) return dash();
  const double x = std::abs(*v) < 0.5 * std::pow(10.0, -decimals) ? 0.0 : *v;  // no "-0.0"
  return fmt::format("{:.{}f}", x, decimals);
}

std::string sig3(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return dash();
  const double a = std::abs(*v);
  if (a >= 1000) return grouped(v);
  if (a == 0) return "0";
  return fixed(v, a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3);
}

std::string grouped(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return dash();
  if (std::abs(*v) >= 1e15) return fmt::format("{:.3g}", *v);
  const long long n = std::llround(*v);
  std::string digits = std::to_string(n < 0 ? -n : n);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3)
    digits.insert(static_cast<size_t>(i), "\u2009");  // a thin space between thousands
  return (n < 0 ? "-" : "") + digits;
}

std::string bps(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return dash();
  const Unit u = bps_unit(std::abs(*v));
  return sig3(*v / u.divisor) + " " + u.name;
}

std::string percent(std::optional<double> v) {
  return v && std::isfinite(*v) ? fixed(v, 1) + "%" : dash();
}

std::string p_value(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return dash();
  return *v < 0.001 ? "<0.001" : fixed(v, 3);
}

std::string size_text(double bytes) {
  if (!std::isfinite(bytes)) return dash();
  const auto n = static_cast<long long>(bytes);
  if (n > 0 && n % (1024 * 1024) == 0) return std::to_string(n / (1024 * 1024)) + "M";
  if (n > 0 && n % 1024 == 0) return std::to_string(n / 1024) + "K";
  return trim_zeros(fmt::format("{:.2f}", bytes));
}

Table::Table(std::vector<std::string> head, size_t text_columns)
    : head_(std::move(head)), text_columns_(text_columns) {}

void Table::row(const std::vector<std::string>& cells) {
  rows_ += "<tr>";
  for (size_t i = 0; i < cells.size(); ++i) {
    const std::string& c = cells[i];
    const bool figure = i >= text_columns_ && !c.empty() &&
                        (std::isdigit(static_cast<unsigned char>(c[0])) || c[0] == '-' ||
                         c[0] == '<' || c == dash());
    rows_ += (figure ? "<td class=\"n\">" : "<td>") + svg::escape(c) + "</td>";
  }
  rows_ += "</tr>\n";
}

std::string Table::str() const {
  std::string s = "<table>\n<thead><tr>";
  for (const std::string& h : head_)
    s += "<th>" + svg::escape(h) + "</th>";
  return s + "</tr></thead>\n<tbody>\n" + rows_ + "</tbody>\n</table>\n";
}

std::string figure(const std::string& svg, std::string_view caption) {
  return "<figure>\n" + svg + "<figcaption>" + svg::escape(caption) + "</figcaption>\n</figure>\n";
}

std::string heading(int level, std::string_view text) {
  return fmt::format("<h{0}>{1}</h{0}>\n", level, svg::escape(text));
}

std::string meta(std::string_view text) {
  return "<p class=\"meta\">" + svg::escape(text) + "</p>\n";
}

std::string error_list(const std::vector<std::string>& lines) {
  if (lines.empty()) return "";
  std::string s = "<ul class=\"errors\">\n";
  for (const std::string& l : lines)
    s += "<li>" + svg::escape(l) + "</li>\n";
  return s + "</ul>\n";
}

}  // namespace html

namespace {

constexpr const char* kStyle = R"css(
body { font: 14px/1.45 "DejaVu Sans", "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
       color: #222; background: #fff; max-width: 980px; margin: 24px auto; padding: 0 16px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 36px 0 6px; padding-bottom: 4px; border-bottom: 1px solid #ccc; }
h3 { font-size: 15px; margin: 26px 0 4px; }
.meta { color: #555; font-size: 13px; margin: 2px 0 8px; }
.source { color: #777; font-weight: normal; font-size: 13px; }
nav ol { font-size: 13px; color: #444; }
figure { margin: 10px 0 4px; break-inside: avoid; }
figcaption { font-size: 12px; color: #555; margin-top: 2px; max-width: 760px; }
svg { display: block; max-width: 100%; height: auto; }
table { border-collapse: collapse; font-size: 12.5px; margin: 8px 0 22px; break-inside: avoid; }
th, td { border: 1px solid #d8d8d8; padding: 3px 8px; vertical-align: top; }
th { background: #f1f4f7; text-align: left; font-weight: 600; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tbody tr:nth-child(even) td { background: #fafbfc; }
ul.errors { color: #a33; font-size: 12.5px; }
code { font-size: 12.5px; background: #f4f4f4; padding: 0 3px; }
@media print {
  body { max-width: none; margin: 0; padding: 0; font-size: 10.5pt; }
  h2 { break-after: avoid; }
  h3 { break-after: avoid; }
  nav { display: none; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  tbody tr:nth-child(even) td { background: none; }
}
)css";

// Whether the document's `schema` is one of `known`; the error names what was found.
void check_schema(const nlohmann::json& doc, std::string_view kind, std::vector<int> known) {
  const auto& s = html::at(doc, "schema");
  std::string reads;
  for (size_t i = 0; i < known.size(); ++i)
    reads += (i == 0 ? "" : i + 1 == known.size() ? " and " : ", ") + std::to_string(known[i]);
  const std::string plural = known.size() > 1 ? "s " : " ";
  if (!s.is_number_integer())
    throw std::runtime_error(
        fmt::format("{} document without an integer \"schema\" (this mtperf "
                    "reads {} schema{}{})",
                    kind, kind, plural, reads));
  const auto v = s.get<long long>();
  for (int k : known)
    if (v == k) return;
  throw std::runtime_error(
      fmt::format("{} schema {}: this mtperf reads {} schema{}{}", kind, v, kind, plural, reads));
}

std::string section_title(DocumentKind kind, const nlohmann::json& doc) {
  switch (kind) {
    case DocumentKind::run: {
      const auto& t = html::at(doc, "test");
      return fmt::format("run: {} {} over {}", html::text(t, "workload"), html::text(t, "protocol"),
                         html::text(t, "transport"));
    }
    case DocumentKind::suite:
      return "suite: every workload on every transport";
    case DocumentKind::sweep: {
      const auto& axis = html::at(html::at(doc, "sweep"), "axis");
      std::string name = axis.is_object() ? html::text(axis, "name") : "adapters";
      std::replace(name.begin(), name.end(), '_', ' ');
      return "sweep over " + name;
    }
    case DocumentKind::compare:
      return "compare";
    case DocumentKind::fleet: {
      const auto& f = html::at(doc, "fleet");
      return fmt::format("fleet: {} ranks, {} {}", html::number(f, "size").value_or(0),
                         html::text(f, "workload"), html::text(html::at(f, "plan"), "pattern"));
    }
    case DocumentKind::fleet_compare:
      return "fleet compare, pair by pair";
  }
  return "";
}

}  // namespace

std::string_view to_string(DocumentKind k) {
  switch (k) {
    case DocumentKind::run:
      return "run";
    case DocumentKind::suite:
      return "suite";
    case DocumentKind::sweep:
      return "sweep";
    case DocumentKind::compare:
      return "compare";
    case DocumentKind::fleet:
      return "fleet";
    case DocumentKind::fleet_compare:
      return "fleet compare";
  }
  return "?";
}

DocumentKind document_kind(const nlohmann::json& doc) {
  if (!doc.is_object())
    throw std::runtime_error(std::string("not an mtperf document: the top level is a JSON ") +
                             doc.type_name() + ", not an object");
  if (doc.contains("compare") && html::at(doc, "compare").is_object()) {
    check_schema(doc, "compare", {1});
    return DocumentKind::compare;
  }
  if (doc.contains("suite") && html::at(doc, "suite").is_object()) {
    check_schema(doc, "suite", {1});
    return DocumentKind::suite;
  }
  if (doc.contains("fleet_compare") && html::at(doc, "fleet_compare").is_array()) {
    check_schema(doc, "fleet compare", {1});
    return DocumentKind::fleet_compare;
  }
  if (doc.contains("fleet") && html::at(doc, "fleet").is_object()) {
    check_schema(doc, "fleet", {1});
    return DocumentKind::fleet;
  }
  if (doc.contains("sweep") && html::at(doc, "sweep").is_object()) {
    check_schema(doc, "sweep", {2, 3});
    return DocumentKind::sweep;
  }
  if (html::at(doc, "test").is_object() && html::at(doc, "summary").is_object()) {
    check_schema(doc, "run", {1});
    return DocumentKind::run;
  }
  throw std::runtime_error(
      "not an mtperf document: no \"compare\", \"suite\", \"sweep\" or \"fleet\" object, nor "
      "\"test\" and \"summary\" (mtperf run|suite|sweep|compare|fleet --format json writes one)");
}

std::string html_section(const ReportInput& input) {
  const DocumentKind kind = document_kind(input.doc);
  std::string body;
  switch (kind) {
    case DocumentKind::run:
      body = html::run_section(input.doc);
      break;
    case DocumentKind::suite:
      body = html::suite_section(input.doc);
      break;
    case DocumentKind::sweep:
      body = html::sweep_section(input.doc);
      break;
    case DocumentKind::compare:
      body = html::compare_section(input.doc);
      break;
    case DocumentKind::fleet:
      body = html::fleet_section(input.doc);
      break;
    case DocumentKind::fleet_compare:
      body = html::fleet_compare_section(input.doc);
      break;
  }
  return "<section>\n<h2>" + svg::escape(section_title(kind, input.doc)) +
         " <span class=\"source\">" + svg::escape(input.name) + "</span></h2>\n" + body +
         "</section>\n";
}

std::string html_report(const std::vector<ReportInput>& inputs, std::string_view title) {
  std::string nav = "<nav><ol>\n", sections;
  for (const ReportInput& in : inputs) {
    const DocumentKind kind = document_kind(in.doc);
    nav += "<li>" + svg::escape(section_title(kind, in.doc)) + " \u2014 " + svg::escape(in.name) +
           "</li>\n";
  }
  for (const ReportInput& in : inputs)
    sections += html_section(in);
  nav += "</ol></nav>\n";
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
         svg::escape(title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n<h1>" +
         svg::escape(title) + "</h1>\n" +
         html::meta("Made by mtperf report from " + std::to_string(inputs.size()) +
                    " JSON document(s). Throughput in bit/s with 10^6 = Mbit/s; CPU in percent "
                    "of the host's CPUs; latency in µs.") +
         nav + sections + "</body>\n</html>\n";
}

}  // namespace mtperf
