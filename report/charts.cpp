#include "report/charts.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "report/svg.hpp"

namespace mtperf::charts {

namespace {

using svg::Anchor;
using svg::Canvas;
using svg::Scale;

constexpr double kWidth = 760;
constexpr const char* kAxis = "#666";
constexpr const char* kGrid = "#e6e6e6";
constexpr const char* kMark = "#b03a2e";

constexpr Colour kPalette[] = {
    {"#a6cee3", "#1f78b4"}, {"#fdbf6f", "#e66101"}, {"#b2df8a", "#33a02c"}, {"#cab2d6", "#6a3d9a"},
    {"#fb9a99", "#e31a1c"}, {"#ffe08a", "#b58900"}, {"#a8dadc", "#2a7f86"}, {"#d9d9d9", "#737373"},
};

// The plot area, in canvas coordinates.
struct Plot {
  double left, top, right, bottom;
};

std::optional<double> finite(std::optional<double> v) {
  return v && std::isfinite(*v) ? v : std::nullopt;
}

// About how wide a text is drawn in a sans-serif face.
double text_width(std::string_view s, double size) {
  size_t glyphs = 0;
  for (unsigned char ch : s)
    glyphs += (ch & 0xC0) != 0x80 ? 1 : 0;  // UTF-8 continuation bytes are no glyph
  return static_cast<double>(glyphs) * size * 0.56;
}

void draw_title(Canvas& c, const std::string& title) {
  c.text(8, 18, title, {Anchor::start, 13, "#222", true});
}

struct LegendEntry {
  std::string name;
  int colour;
  enum { box, line, dashed } kind;
};

// One line of entries from x at y (wrapped at the canvas' width).
void legend(Canvas& c, double x, double y, const std::vector<LegendEntry>& entries) {
  double at = x;
  for (const LegendEntry& e : entries) {
    const double w = 28 + text_width(e.name, 11);
    if (at + w > c.width() - 8 && at > x) at = x, y += 16;
    const Colour& k = colour(e.colour);
    if (e.kind == LegendEntry::box)
      c.rect(at, y - 9, 12, 10, k.fill, k.stroke);
    else
      c.line(at, y - 4, at + 16, y - 4, k.stroke, 2, e.kind == LegendEntry::dashed);
    c.text(at + 20, y, e.name, {Anchor::start, 11});
    at += w + 10;
  }
}

// Horizontal grid lines with their labels on the left (or right) of the plot.
void y_axis(Canvas& c, const Plot& p, const Scale& s, const std::vector<double>& ticks, bool log,
            const std::string& label, bool right) {
  const std::vector<std::string> labels = svg::tick_labels(ticks);
  for (size_t i = 0; i < ticks.size(); ++i) {
    const double y = s(ticks[i]);
    if (!right) c.line(p.left, y, p.right, y, kGrid);
    const std::string text = log ? svg::compact(ticks[i]) : labels[i];
    if (right)
      c.text(p.right + 6, y + 4, text, {Anchor::start, 10, kAxis});
    else
      c.text(p.left - 6, y + 4, text, {Anchor::end, 10, kAxis});
  }
  c.line(right ? p.right : p.left, p.top, right ? p.right : p.left, p.bottom, kAxis);
  const double x = right ? c.width() - 10 : 14;
  c.text(x, (p.top + p.bottom) / 2, label,
         {Anchor::middle, 11, "#333", false, right ? 90.0 : -90.0});
}

// The domain's ticks for values on a linear axis from 0, or a log axis.
// headroom > 1 keeps the largest value off the plot's top edge (lines, whose labels sit above).
std::vector<double> value_ticks(const std::vector<double>& values, bool log, double headroom = 1) {
  double lo = 0, hi = 0;
  bool any = false;
  for (double v : values) {
    if (!std::isfinite(v) || (log && v <= 0)) continue;
    lo = any ? std::min(lo, v) : v;
    hi = any ? std::max(hi, v) : v;
    any = true;
  }
  if (log) return svg::log_ticks(lo, hi);
  return svg::nice_ticks(0, any && hi > 0 ? hi * headroom : 1, 5);
}

const Colour& series_colour(const Series& s, size_t index) {
  return colour(s.colour >= 0 ? s.colour : static_cast<int>(index));
}

}  // namespace

const Colour& colour(int index) {
  constexpr int n = sizeof kPalette / sizeof kPalette[0];
  return kPalette[((index % n) + n) % n];
}

namespace {

// A box for each series, in its colour, above the plot at `x`.
void series_legend(Canvas& c, const std::vector<Series>& series, double x) {
  std::vector<LegendEntry> entries;
  for (size_t j = 0; j < series.size(); ++j)
    entries.push_back({series[j].name,
                       series[j].colour >= 0 ? series[j].colour : static_cast<int>(j),
                       LegendEntry::box});
  legend(c, x, 38, entries);
}

}  // namespace

std::string bar_chart(const BarChart& ch) {
  const size_t n = std::max<size_t>(1, ch.categories.size());
  const size_t m = std::max<size_t>(1, ch.series.size());
  std::vector<double> all;
  for (const Series& s : ch.series)
    for (auto v : s.values)
      if (finite(v)) all.push_back(*v);
  const std::vector<double> ticks = value_ticks(all, false);
  const double group = (kWidth - 90) / static_cast<double>(n);
  const size_t stride = (n + 39) / 40;
  double longest = 0;
  for (const std::string& cat : ch.categories)
    longest = std::max(longest, text_width(cat, 11));
  const bool slanted = longest > group * static_cast<double>(stride) - 6;
  const double top = ch.series.size() > 1 ? 52 : 34;
  const double bottom_margin = slanted ? std::min(130.0, 24 + longest * 0.75) : 44;
  Canvas c(kWidth, top + 220 + bottom_margin, ch.title);
  draw_title(c, ch.title);
  const Plot p{70, top, kWidth - 20, top + 220};
  const Scale y{ticks.front(), ticks.back(), p.bottom, p.top};
  y_axis(c, p, y, ticks, false, ch.y_label, false);
  const double bw = std::min(group * 0.8 / static_cast<double>(m), 64.0);
  const double pad = (group - bw * static_cast<double>(m)) / 2;
  for (size_t i = 0; i < ch.categories.size(); ++i) {
    const double gx = p.left + static_cast<double>(i) * group;
    for (size_t j = 0; j < ch.series.size(); ++j) {
      const Series& s = ch.series[j];
      const double x = gx + pad + static_cast<double>(j) * bw;
      const auto v = i < s.values.size() ? finite(s.values[i]) : std::nullopt;
      if (v) {
        c.rect(x + 1, y(*v), bw - 2, y(0) - y(*v), series_colour(s, j).fill,
               series_colour(s, j).stroke);
        if (bw >= 26) c.text(x + bw / 2, y(*v) - 3, svg::compact(*v), {Anchor::middle, 9});
      } else {
        const std::string note = i < s.notes.size() && !s.notes[i].empty() ? s.notes[i] : "n/a";
        c.text(x + bw / 2 + 3, p.bottom - 4, note, {Anchor::start, 9, "#999", false, -90});
      }
    }
    const double cx = gx + group / 2;
    if (i % stride != 0) continue;  // many categories: every stride-th labelled
    if (slanted)
      c.text(cx, p.bottom + 14, ch.categories[i], {Anchor::end, 11, "#333", false, -35});
    else
      c.text(cx, p.bottom + 16, ch.categories[i], {Anchor::middle, 11});
  }
  c.line(p.left, p.bottom, p.right, p.bottom, kAxis);
  if (ch.series.size() > 1) series_legend(c, ch.series, p.left);
  return c.str();
}

std::string hbar_chart(const HBarChart& ch) {
  double label_w = 60, note_w = 40;
  std::vector<double> all;
  for (const HBar& b : ch.bars) {
    label_w = std::max(label_w, text_width(b.label, 11) + 16);
    note_w = std::max(note_w, text_width(b.note, 11) + 14);
    for (auto v : {b.value, b.hi})
      if (finite(v)) all.push_back(*v);
    for (double s : b.samples)
      if (std::isfinite(s)) all.push_back(s);
  }
  label_w = std::min(label_w, 220.0);
  note_w = std::min(note_w, 280.0);
  const double row_h = 30, top = 32;
  Canvas c(kWidth, top + row_h * static_cast<double>(ch.bars.size()) + 44, ch.title);
  draw_title(c, ch.title);
  const Plot p{label_w, top, kWidth - note_w, top + row_h * static_cast<double>(ch.bars.size())};
  const std::vector<double> ticks = value_ticks(all, false);
  const Scale x{ticks.front(), ticks.back(), p.left, p.right};
  const std::vector<std::string> labels = svg::tick_labels(ticks);
  for (size_t i = 0; i < ticks.size(); ++i) {
    c.line(x(ticks[i]), p.top, x(ticks[i]), p.bottom, kGrid);
    c.text(x(ticks[i]), p.bottom + 14, labels[i], {Anchor::middle, 10, kAxis});
  }
  c.text((p.left + p.right) / 2, p.bottom + 34, ch.x_label, {Anchor::middle, 11});
  for (size_t i = 0; i < ch.bars.size(); ++i) {
    const HBar& b = ch.bars[i];
    const double y0 = p.top + row_h * static_cast<double>(i), mid = y0 + row_h / 2;
    const Colour& k = colour(b.colour);
    double end = x(0);
    if (const auto v = finite(b.value)) {
      c.rect(x(0), y0 + row_h * 0.2, x(*v) - x(0), row_h * 0.6, k.fill, k.stroke);
      end = x(*v);
    }
    if (finite(b.lo) && finite(b.hi)) {
      const double lo = x(std::max(0.0, *b.lo)), hi = x(*b.hi);
      c.line(lo, mid, hi, mid, "#333", 1.5);
      if (*b.lo >= 0) c.line(lo, mid - 6, lo, mid + 6, "#333", 1.5);
      c.line(hi, mid - 6, hi, mid + 6, "#333", 1.5);
      end = std::max(end, hi);
    }
    for (double s : b.samples)
      if (std::isfinite(s)) c.circle(x(s), mid, 2.5, "#444");
    c.text(p.left - 8, mid + 4, b.label, {Anchor::end, 11});
    const std::string note = finite(b.value) ? b.note : (b.note.empty() ? "n/a" : b.note);
    c.text(end + 8, mid + 4, note, {Anchor::start, 11, "#222"});
  }
  c.line(p.left, p.top, p.left, p.bottom, kAxis);
  return c.str();
}

std::string stack_chart(const StackChart& ch) {
  double label_w = 60;
  for (const StackRow& r : ch.rows)
    label_w = std::max(label_w, text_width(r.label, 11) + 16);
  label_w = std::min(label_w, 260.0);
  const double row_h = 30, top = 50;
  Canvas c(kWidth, top + row_h * static_cast<double>(ch.rows.size()) + 44, ch.title);
  draw_title(c, ch.title);
  const Plot p{label_w, top, kWidth - 24, top + row_h * static_cast<double>(ch.rows.size())};
  const std::vector<double> ticks = svg::nice_ticks(0, ch.max > 0 ? ch.max : 100, 5);
  const Scale x{ticks.front(), ticks.back(), p.left, p.right};
  const std::vector<std::string> labels = svg::tick_labels(ticks);
  for (size_t i = 0; i < ticks.size(); ++i) {
    c.line(x(ticks[i]), p.top, x(ticks[i]), p.bottom, kGrid);
    c.text(x(ticks[i]), p.bottom + 14, labels[i], {Anchor::middle, 10, kAxis});
  }
  c.text((p.left + p.right) / 2, p.bottom + 34, ch.x_label, {Anchor::middle, 11});
  for (size_t i = 0; i < ch.rows.size(); ++i) {
    const StackRow& r = ch.rows[i];
    const double y0 = p.top + row_h * static_cast<double>(i);
    double sum = 0;
    for (size_t j = 0; j < r.parts.size(); ++j) {
      const auto v = finite(r.parts[j]);
      if (!v || *v <= 0) continue;
      const double a = x(sum), b = x(std::min(sum + *v, ticks.back()));
      c.rect(a, y0 + row_h * 0.18, b - a, row_h * 0.64, colour(static_cast<int>(j)).fill,
             colour(static_cast<int>(j)).stroke);
      if (b - a >= 30)
        c.text((a + b) / 2, y0 + row_h / 2 + 4, svg::compact(*v), {Anchor::middle, 10});
      sum += *v;
    }
    c.text(p.left - 8, y0 + row_h / 2 + 4, r.label, {Anchor::end, 11});
  }
  c.line(p.left, p.top, p.left, p.bottom, kAxis);
  std::vector<LegendEntry> entries;
  for (size_t j = 0; j < ch.part_names.size(); ++j)
    entries.push_back({ch.part_names[j], static_cast<int>(j), LegendEntry::box});
  legend(c, p.left, 38, entries);
  return c.str();
}

namespace {

// Lines and points of one series; a missing value breaks the line.
void draw_series(Canvas& c, const LineChart& ch, const Series& s, const Colour& k, const Scale& x,
                 const Scale& y) {
  std::vector<svg::Point> run;
  auto flush = [&] {
    c.polyline(run, k.stroke, 2, s.dashed);
    run.clear();
  };
  for (size_t i = 0; i < ch.x.size(); ++i) {
    const auto v = i < s.values.size() ? finite(s.values[i]) : std::nullopt;
    if (!v || (ch.y_log && !s.right_axis && *v <= 0)) {
      flush();
      continue;
    }
    run.emplace_back(x(ch.x[i]), y(*v));
  }
  flush();
  double last_label_end = -1e9;
  bool below = false;
  for (size_t i = 0; i < ch.x.size(); ++i) {
    const auto v = i < s.values.size() ? finite(s.values[i]) : std::nullopt;
    if (!v || (ch.y_log && !s.right_axis && *v <= 0)) continue;
    const double px = x(ch.x[i]), py = y(*v);
    if (!s.dashed) c.circle(px, py, 3, "#fff", k.stroke);
    if (i >= s.notes.size() || s.notes[i].empty()) continue;
    // A label that would run past the plot ends at its point; one that would run into the last
    // goes below its point instead.
    const double w = text_width(s.notes[i], 10);
    const bool left = px + 6 + w > c.width() - 8;
    const double start = left ? px - 6 - w : px + 6;
    below = start < last_label_end && !below;
    c.text(left ? px - 6 : px + 6, below ? py + 15 : py - 7, s.notes[i],
           {left ? Anchor::end : Anchor::start, 10, "#222", false, 0, true});
    last_label_end = start + w;
  }
}

void x_axis(Canvas& c, const LineChart& ch, const Plot& p, const Scale& x) {
  std::vector<Tick> ticks = ch.x_ticks;
  if (ticks.empty())
    for (double v : ch.x)
      ticks.push_back({v, svg::compact(v)});
  for (const Tick& t : ticks) {
    c.line(x(t.at), p.bottom, x(t.at), p.bottom + 4, kAxis);
    c.text(x(t.at), p.bottom + 16, t.label, {Anchor::middle, 10, kAxis});
  }
  c.line(p.left, p.bottom, p.right, p.bottom, kAxis);
  c.text((p.left + p.right) / 2, p.bottom + 36, ch.x_label, {Anchor::middle, 11});
}

}  // namespace

std::string line_chart(const LineChart& ch) {
  bool has_right = false;
  std::vector<double> left_values, right_values;
  for (const Series& s : ch.series) {
    has_right = has_right || s.right_axis;
    for (auto v : s.values)
      if (finite(v)) (s.right_axis ? right_values : left_values).push_back(*v);
  }
  const double top = 54;
  Canvas c(kWidth, top + 240 + 50, ch.title);
  draw_title(c, ch.title);
  const Plot p{72, top, kWidth - (has_right ? 72 : 24), top + 240};
  double x0 = ch.x.empty() ? 0 : ch.x.front(), x1 = ch.x.empty() ? 1 : ch.x.back();
  for (const Tick& t : ch.x_ticks)
    x0 = std::min(x0, t.at), x1 = std::max(x1, t.at);
  const Scale x{x0, x1, p.left + 18, p.right - 18, ch.x_log};
  const std::vector<double> ly = value_ticks(left_values, ch.y_log, 1.08);
  const Scale y{ly.front(), ly.back(), p.bottom, p.top, ch.y_log};
  const std::vector<double> ry = value_ticks(right_values, false, 1.08);
  const Scale y2{ry.front(), ry.back(), p.bottom, p.top};
  for (const Mark& m : ch.marks)
    if (m.shade_after) c.rect(x(m.at), p.top, p.right - x(m.at), p.bottom - p.top, "#fdecea");
  y_axis(c, p, y, ly, ch.y_log, ch.y_label, false);
  if (has_right) y_axis(c, p, y2, ry, false, ch.y2_label, true);
  x_axis(c, ch, p, x);
  for (size_t i = 0; i < ch.marks.size(); ++i) {  // labels staggered, above the plot
    const Mark& m = ch.marks[i];
    c.line(x(m.at), p.top - 4, x(m.at), p.bottom, kMark, 1, true);
    c.text(x(m.at) + 4, p.top - 4 + 12 * static_cast<double>(i), m.label,
           {Anchor::start, 10, kMark, false, 0, true});
  }
  std::vector<LegendEntry> entries;
  for (size_t i = 0; i < ch.series.size(); ++i) {
    const Series& s = ch.series[i];
    const int k = s.colour >= 0 ? s.colour : static_cast<int>(i);
    draw_series(c, ch, s, colour(k), x, s.right_axis ? y2 : y);
    entries.push_back({s.name + (s.right_axis && has_right ? " (right axis)" : ""), k,
                       s.dashed ? LegendEntry::dashed : LegendEntry::line});
  }
  if (ch.series.size() > 1) legend(c, p.left, 38, entries);
  return c.str();
}

}  // namespace mtperf::charts
