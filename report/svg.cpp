#include "report/svg.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace mtperf::svg {

namespace {

// The nice step (1, 2, 2.5, 5 × 10^k) nearest above raw.
double nice_step(double raw) {
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double residual = raw / magnitude;
  const double nice = residual <= 1     ? 1
                      : residual <= 2   ? 2
                      : residual <= 2.5 ? 2.5
                      : residual <= 5   ? 5
                                        : 10;
  return nice * magnitude;
}

// Decimals that show a multiple of step exactly enough: 0.25 -> 2, 2.5 -> 1, 40 -> 0.
int decimals_for(double step) {
  if (!(step > 0) || !std::isfinite(step)) return 0;
  for (int d = 0; d < 9; ++d) {
    const double scaled = step * std::pow(10.0, d);
    if (std::abs(scaled - std::round(scaled)) < 1e-6 * scaled) return d;
  }
  return 9;
}

std::string trimmed(std::string s) {
  if (s.find('.') == std::string::npos) return s;
  while (!s.empty() && s.back() == '0')
    s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

std::string_view anchor_name(Anchor a) {
  switch (a) {
    case Anchor::start:
      return "start";
    case Anchor::middle:
      return "middle";
    case Anchor::end:
      return "end";
  }
  return "start";
}

}  // namespace

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string coord(double v) {
  if (!std::isfinite(v)) return "0";
  return trimmed(fmt::format("{:.2f}", v));
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (lo > hi) std::swap(lo, hi);
  if (hi - lo <= std::abs(hi) * 1e-12) hi = lo + (lo == 0 ? 1 : std::abs(lo));
  const double step = nice_step((hi - lo) / std::max(1, target));
  const double first = std::floor(lo / step + 1e-9) * step;
  std::vector<double> ticks;
  for (int i = 0; i < 1000; ++i) {
    const double t = first + i * step;
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
    if (t >= hi - step * 1e-9) break;
  }
  if (ticks.size() < 2) ticks.push_back(first + step);
  return ticks;
}

std::vector<double> log_ticks(double lo, double hi) {
  if (!(lo > 0) || !(hi > 0) || !std::isfinite(lo) || !std::isfinite(hi)) lo = 1, hi = 10;
  if (lo > hi) std::swap(lo, hi);
  int first = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  int last = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  if (last <= first) last = first + 1;
  const bool fine = last - first <= 2;
  std::vector<double> ticks;
  for (int e = first; e <= last; ++e) {
    const double p = std::pow(10.0, e);
    ticks.push_back(p);
    if (fine && e < last) ticks.insert(ticks.end(), {2 * p, 5 * p});
  }
  // The axis runs from the last tick at or below lo to the first at or above hi.
  while (ticks.size() > 2 && ticks[ticks.size() - 2] >= hi * (1 - 1e-9))
    ticks.pop_back();
  while (ticks.size() > 2 && ticks[1] <= lo * (1 + 1e-9))
    ticks.erase(ticks.begin());
  return ticks;
}

std::vector<std::string> tick_labels(const std::vector<double>& ticks) {
  double top = 0, step = 0;
  for (size_t i = 0; i < ticks.size(); ++i) {
    if (std::isfinite(ticks[i])) top = std::max(top, std::abs(ticks[i]));
    if (i > 0 && std::isfinite(ticks[i] - ticks[i - 1]))
      step = step == 0 ? ticks[i] - ticks[i - 1] : std::min(step, ticks[i] - ticks[i - 1]);
  }
  double scale = 1;
  std::string suffix;
  if (top >= 1e9) {
    scale = 1e9, suffix = "G";
  } else if (top >= 1e6) {
    scale = 1e6, suffix = "M";
  } else if (top >= 1e4) {
    scale = 1e3, suffix = "k";
  }
  const int decimals = std::min(decimals_for(step / scale), 6);
  std::vector<std::string> labels;
  for (double t : ticks) {
    if (!std::isfinite(t)) {
      labels.emplace_back("\u2013");
      continue;
    }
    const std::string n = trimmed(fmt::format("{:.{}f}", t / scale, decimals));
    labels.push_back(n == "0" ? n : n + suffix);
  }
  return labels;
}

std::string compact(double v) {
  if (!std::isfinite(v)) return "\u2013";
  const double a = std::abs(v);
  std::string suffix;
  if (a >= 1e9) {
    v /= 1e9, suffix = "G";
  } else if (a >= 1e6) {
    v /= 1e6, suffix = "M";
  } else if (a >= 1e4) {
    v /= 1e3, suffix = "k";
  }
  const double b = std::abs(v);
  const int decimals = b == 0 || b >= 100 ? 0 : b >= 10 ? 1 : b >= 1 ? 2 : 3;
  return trimmed(fmt::format("{:.{}f}", v, decimals)) + suffix;
}

double Scale::operator()(double v) const {
  double a = d0, b = d1, x = v;
  if (log) {
    a = std::log10(std::max(d0, 1e-300));
    b = std::log10(std::max(d1, 1e-300));
    x = v > 0 ? std::log10(v) : a;
  }
  if (!std::isfinite(x) || !std::isfinite(a) || !std::isfinite(b) || a == b) return (r0 + r1) / 2;
  return r0 + (x - a) / (b - a) * (r1 - r0);
}

Canvas::Canvas(double width, double height, std::string_view title)
    : width_(width), height_(height) {
  body_ = "<title>" + escape(title) + "</title>\n";
}

void Canvas::rect(double x, double y, double w, double h, std::string_view fill,
                  std::string_view stroke) {
  if (w < 0) x += w, w = -w;
  if (h < 0) y += h, h = -h;
  body_ += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"", coord(x),
                       coord(y), coord(w), coord(h), fill);
  if (stroke != "none") body_ += fmt::format(" stroke=\"{}\"", stroke);
  body_ += "/>\n";
}

void Canvas::image(double x, double y, double w, double h, std::string_view href, bool pixelated) {
  body_ += fmt::format(
      "<image x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" preserveAspectRatio=\"none\"{} "
      "href=\"{}\"/>\n",
      coord(x), coord(y), coord(w), coord(h),
      pixelated ? " style=\"image-rendering:pixelated\"" : "", href);
}

void Canvas::line(double x1, double y1, double x2, double y2, std::string_view stroke, double width,
                  bool dashed) {
  body_ += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"", coord(x1),
                       coord(y1), coord(x2), coord(y2), stroke);
  if (width != 1) body_ += fmt::format(" stroke-width=\"{}\"", coord(width));
  if (dashed) body_ += " stroke-dasharray=\"6 4\"";
  body_ += "/>\n";
}

void Canvas::polyline(const std::vector<Point>& points, std::string_view stroke, double width,
                      bool dashed) {
  if (points.size() < 2) return;
  std::string pts;
  for (const auto& [x, y] : points)
    pts += (pts.empty() ? "" : " ") + coord(x) + "," + coord(y);
  body_ += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"",
                       pts, stroke, coord(width));
  if (dashed) body_ += " stroke-dasharray=\"6 4\"";
  body_ += "/>\n";
}

void Canvas::circle(double cx, double cy, double r, std::string_view fill,
                    std::string_view stroke) {
  body_ += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\"", coord(cx), coord(cy),
                       coord(r), fill);
  if (stroke != "none") body_ += fmt::format(" stroke=\"{}\"", stroke);
  body_ += "/>\n";
}

void Canvas::text(double x, double y, std::string_view s, const TextStyle& style) {
  body_ += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"{}\" fill=\"{}\"", coord(x), coord(y),
                       coord(style.size), style.fill);
  if (style.anchor != Anchor::start)
    body_ += fmt::format(" text-anchor=\"{}\"", anchor_name(style.anchor));
  if (style.bold) body_ += " font-weight=\"bold\"";
  if (style.halo) body_ += " stroke=\"#fff\" stroke-width=\"3\" paint-order=\"stroke\"";
  if (style.rotate != 0)
    body_ +=
        fmt::format(" transform=\"rotate({} {} {})\"", coord(style.rotate), coord(x), coord(y));
  body_ += ">" + escape(s) + "</text>\n";
}

std::string Canvas::str() const {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" role=\"img\" font-family=\"sans-serif\">\n{2}</svg>\n",
      coord(width_), coord(height_), body_);
}

}  // namespace mtperf::svg
