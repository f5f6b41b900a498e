#pragma once
// The HTML report's charts (report/html.hpp), each one inline <svg> element drawn with
// report/svg.hpp: grouped bars, horizontal bars with confidence whiskers, stacked percentage
// bars and line charts (linear or log axes, a second axis on the right, marked columns).
//
// Values come in display units: the caller has divided bit/s by 10^9 for an axis in Gbit/s and
// says so in the axis label. A value that is absent (nullopt) or not finite is not drawn; the
// chart never prints "nan" or "inf". Every string is escaped by the chart.
#include <optional>
#include <string>
#include <vector>

namespace mtperf::charts {

// Light fills with a darker stroke of the same hue; lines use the stroke. Index modulo the size.
struct Colour {
  const char* fill;
  const char* stroke;
};
const Colour& colour(int index);
inline constexpr int kGrey = 7;  // the palette's grey, for ideal and reference lines

struct Series {
  std::string name;
  std::vector<std::optional<double>> values;  // one per category (bars) or per x (lines)
  // Optional, one per value: a bar chart prints it where the bar is missing ("n/a", "failed");
  // a line chart prints it beside the point ("p99 15 µs").
  std::vector<std::string> notes;
  bool dashed = false;      // lines: an ideal or reference line
  bool right_axis = false;  // lines: read against the right-hand axis
  int colour = -1;          // palette index; -1: the series' position
};

// Vertical bars, one group per category, one bar per series in each group, from 0.
struct BarChart {
  std::string title;
  std::vector<std::string> categories;
  std::vector<Series> series;
  std::string y_label;  // with the unit: "throughput, Gbit/s"
};
std::string bar_chart(const BarChart& chart);

// Horizontal bars, one per row, from 0: a confidence whisker lo..hi (clipped at 0), the
// samples as dots, and a note beside the bar (a verdict).
struct HBar {
  std::string label;
  std::optional<double> value;
  std::optional<double> lo, hi;
  std::vector<double> samples;
  std::string note;
  int colour = 0;
};
struct HBarChart {
  std::string title;
  std::vector<HBar> bars;
  std::string x_label;
};
std::string hbar_chart(const HBarChart& chart);

// Horizontal stacked bars on 0..max (percent): one row per host, one segment per part.
struct StackRow {
  std::string label;
  std::vector<std::optional<double>> parts;  // in the order of part_names
};
struct StackChart {
  std::string title;
  std::vector<std::string> part_names;
  std::vector<StackRow> rows;
  std::string x_label;
  double max = 100;
};
std::string stack_chart(const StackChart& chart);

struct Tick {
  double at;
  std::string label;
};
// A vertical line at an x, labelled at the top; shade_after tints the plot from there on.
struct Mark {
  double at;
  std::string label;
  bool shade_after = false;
};
// Lines over an ascending x; the left axis from 0 (or log), the right one for right_axis series.
struct LineChart {
  std::string title;
  std::vector<double> x;
  std::vector<Tick> x_ticks;  // empty: one tick per x, labelled with compact()
  bool x_log = false, y_log = false;
  std::string x_label, y_label, y2_label;
  std::vector<Series> series;
  std::vector<Mark> marks;
};
std::string line_chart(const LineChart& chart);

}  // namespace mtperf::charts
