#pragma once
// What the HTML report's sections (report/html_*.cpp) share: reading a document's fields without
// trusting their types, formatting figures with their units, and tables and figures as HTML.
// Internal to report/; the interface is report/html.hpp.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace mtperf::html {

using Json = nlohmann::json;

// j[key] when j is an object that has it, else a null value.
const Json& at(const Json& j, std::string_view key);
// j[key] as a finite number; nullopt when missing, null, of another type or not finite.
std::optional<double> number(const Json& j, std::string_view key);
// j[key] as a string; "" when missing or of another type.
std::string text(const Json& j, std::string_view key);
// j[key] when it is an array, else an empty one.
const Json& array(const Json& j, std::string_view key);

// A unit for an axis or a column: values are divided by `divisor` and labelled `name`.
struct Unit {
  double divisor = 1;
  std::string name;
};
// bit/s scaled by the largest value: Gbit/s, Mbit/s, kbit/s or bit/s.
Unit bps_unit(double largest);

// Table cells: "–" for nullopt. Units are in the column heads unless the name says otherwise.
std::string dash();
std::string fixed(std::optional<double> v, int decimals);
std::string sig3(std::optional<double> v);     // 3 significant digits: 0.123, 4.82, 715
std::string grouped(std::optional<double> v);  // whole, thousands apart: 44 827
std::string bps(std::optional<double> v);      // "9.57 Gbit/s", "714 kbit/s"
std::string percent(std::optional<double> v);  // "38.2%"
std::string p_value(std::optional<double> v);  // "0.003", "<0.001"
// Bytes as a size: 8192 -> "8K", 1048576 -> "1M", 1500 -> "1500".
std::string size_text(double bytes);

// An HTML table; every cell is escaped here. The first `text_columns` columns are text (left);
// in the others a cell that starts like a number ("4.82", "-0.02 .. 19", "<0.001", "–") is a
// figure (right-aligned, tabular digits), any other ("no difference") text.
class Table {
 public:
  explicit Table(std::vector<std::string> head, size_t text_columns = 1);
  void row(const std::vector<std::string>& cells);
  std::string str() const;

 private:
  std::vector<std::string> head_;
  size_t text_columns_;
  std::string rows_;
};

// <figure> with an already rendered SVG and an escaped caption.
std::string figure(const std::string& svg, std::string_view caption);
// <hN> with escaped text.
std::string heading(int level, std::string_view text);
// <p class="meta"> with escaped text.
std::string meta(std::string_view text);
// <ul class="errors"> of escaped lines; "" when there are none.
std::string error_list(const std::vector<std::string>& lines);

// The sections' bodies (their heading included), one per kind.
std::string run_section(const Json& doc);
std::string suite_section(const Json& doc);
std::string sweep_section(const Json& doc);
std::string compare_section(const Json& doc);
std::string fleet_section(const Json& doc);
// `mtperf compare a.json b.json --format json` of two fleet runs: a ratio heatmap per
// transport and figure, the pairs that moved listed.
std::string fleet_compare_section(const Json& doc);

}  // namespace mtperf::html
