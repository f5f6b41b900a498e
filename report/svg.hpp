#pragma once
// Chart primitives for the HTML report (report/html.hpp): inline SVG written as text, no script.
//
// Coordinates are SVG user units (CSS px at 100% zoom), origin at the top left, y downward.
// Every string that reaches the output passes through escape(); every number through coord() or
// tick_labels() or compact(), which never print "nan" or "inf". No global state.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mtperf::svg {

// `&`, `<`, `>`, `"` and `'` as character references: safe in text and in quoted attributes.
std::string escape(std::string_view text);

// A number for an attribute: at most two decimals, trailing zeros dropped; non-finite as "0".
std::string coord(double v);

// Ticks at nice numbers (1, 2, 2.5 or 5 × 10^k apart) covering [lo, hi], about `target` of
// them: the first at or below lo, the last at or above hi. A range that is empty or not finite
// becomes [lo, lo + 1] (or [0, 1]), so there are always two ticks or more.
std::vector<double> nice_ticks(double lo, double hi, int target = 5);

// Ticks for a base-10 log axis covering [lo, hi] (both > 0; else [1, 10]): the powers of ten
// from the one at or below lo to the one at or above hi, with 2 and 5 between them when that
// spans two decades or fewer.
std::vector<double> log_ticks(double lo, double hi);

// Labels for the ticks of a linear axis, alike: one suffix for all, chosen by the largest
// (k from 10^4, M from 10^6, G from 10^9), and the decimals the step between ticks needs
// (0.25, 2.5, 40, 2.5M). A log axis labels each tick with compact().
std::vector<std::string> tick_labels(const std::vector<double>& ticks);

// A value label: three significant digits, with a k suffix from 10^4, M from 10^6, G from
// 10^9 (9.57, 123, 4186, 45.2k, 1M, 1.2G); "–" for a value that is not finite.
std::string compact(double v);

// Maps a domain [d0, d1] onto a pixel range [r0, r1], linearly or on a base-10 log scale (where
// a value at or below 0 maps to d0). A degenerate domain maps everything to the range's middle.
struct Scale {
  double d0 = 0, d1 = 1;
  double r0 = 0, r1 = 1;
  bool log = false;
  double operator()(double v) const;
};

enum class Anchor { start, middle, end };

struct TextStyle {
  Anchor anchor = Anchor::start;
  double size = 11;  // px
  std::string_view fill = "#333";
  bool bold = false;
  double rotate = 0;  // degrees about (x, y); -90 for a vertical axis label
  bool halo = false;  // a white outline, readable over lines and grid
};

using Point = std::pair<double, double>;

// One <svg> element, built as text. Colours are CSS colours given by the caller (not escaped:
// they come from the code, never from a document).
class Canvas {
 public:
  // `title` becomes the <title> (the chart's accessible name); it is escaped here.
  Canvas(double width, double height, std::string_view title);

  double width() const { return width_; }
  double height() const { return height_; }

  void rect(double x, double y, double w, double h, std::string_view fill,
            std::string_view stroke = "none");
  void line(double x1, double y1, double x2, double y2, std::string_view stroke, double width = 1,
            bool dashed = false);
  void polyline(const std::vector<Point>& points, std::string_view stroke, double width = 2,
                bool dashed = false);
  void circle(double cx, double cy, double r, std::string_view fill,
              std::string_view stroke = "none");
  // A raster image over (x, y, w, h): `href` a data URI made by the code (not escaped), drawn
  // with its pixels as squares when `pixelated` (scaled up), smoothed otherwise.
  void image(double x, double y, double w, double h, std::string_view href, bool pixelated);
  // The text is escaped here.
  void text(double x, double y, std::string_view text, const TextStyle& style = {});

  // The whole element, "<svg ...>...</svg>".
  std::string str() const;

 private:
  double width_, height_;
  std::string body_;
};

}  // namespace mtperf::svg
