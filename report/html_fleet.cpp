// The fleet section of the HTML report: per transport and figure, the N x N heatmap of the
// pairs (row: the client rank, column: the server rank), cells coloured by their share of the
// best pair, failed pairs in their own colour (above kRasterRanks ranks a raster image, a pixel per
// pair, with the group matrix beside it); the worst rows and columns; a histogram of the pairs'
// figures.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "report/html_parts.hpp"
#include "report/png.hpp"
#include "report/svg.hpp"

namespace mtperf::html {
namespace {

// Above this many ranks a fleet's heatmap is a raster, a pixel per pair (an SVG cell per pair
// would be a quarter of a million elements at 512 ranks, a million at 1,024), framed by group,
// with the group matrix beside it; up to it, a cell per pair with its figure where it fits.
constexpr size_t kRasterRanks = 256;
// The raster's limit: 4,096 ranks are 16 M pixels, 22 MB of page a figure.
constexpr size_t kMaxRanksRastered = 4096;

bool higher_is_better(const std::string& figure) {
  return figure.rfind("p", 0) != 0;
}

std::string unit_name(const std::string& figure) {
  if (figure.rfind("throughput", 0) == 0) return "Gbit/s";
  if (figure == "transaction_rate") return "trans/s";
  return "us";
}
double unit_scale(const std::string& figure) {
  return figure.rfind("throughput", 0) == 0 ? 1e-9 : 1;
}

// Red (half the best or worse) through yellow to green (the best).
png::Rgb colour_rgb(double share) {
  share = std::clamp(share, 0.5, 1.0);
  const double t = (share - 0.5) / 0.5;  // 0 red .. 1 green
  auto mix = [](double a, double b, double u) { return uint8_t(std::lround(a + (b - a) * u)); };
  if (t < 0.5) {
    const double u = t / 0.5;
    return {mix(215, 254, u), mix(48, 224, u), mix(39, 139, u)};
  }
  const double u = (t - 0.5) / 0.5;
  return {mix(254, 26, u), mix(224, 152, u), mix(139, 80, u)};
}
std::string colour(double share) {
  const png::Rgb c = colour_rgb(share);
  return fmt::format("#{:02x}{:02x}{:02x}", c.r, c.g, c.b);
}

struct Grid {
  size_t n = 0;
  std::vector<std::vector<std::optional<double>>> cells;
  std::map<std::pair<size_t, size_t>, std::string> failed;  // (src, dst) -> why
};

Grid grid_of(const Json& doc, size_t transport, const std::string& figure) {
  Grid g;
  const auto& names = array(at(doc, "fleet"), "transports");
  const std::string name = transport < names.size() && names[transport].is_string()
                               ? names[transport].get<std::string>()
                               : "";
  const Json& cells = array(at(at(at(doc, "matrices"), name), figure), "cells");
  g.n = std::min(cells.size(), kMaxRanksRastered);
  g.cells.assign(g.n, std::vector<std::optional<double>>(g.n));
  for (size_t i = 0; i < g.n; ++i) {
    const Json& row = cells[i];
    if (!row.is_array()) continue;
    for (size_t j = 0; j < g.n && j < row.size(); ++j)
      if (row[j].is_number() && std::isfinite(row[j].get<double>()))
        g.cells[i][j] = row[j].get<double>();
  }
  for (const Json& r : array(doc, "results")) {
    if (number(r, "transport") != double(transport) || at(r, "ok") != false) continue;
    const auto s = number(r, "src"), d = number(r, "dst");
    if (!s || !d || *s < 0 || *d < 0 || *s >= double(g.n) || *d >= double(g.n)) continue;
    g.failed[{size_t(*s), size_t(*d)}] = text(r, "error");
  }
  return g;
}

// The order the heatmap draws the ranks in: by group (the roster's "group", groups in order of
// their first rank), rank order within one; ranks without a group last. Without groups, rank
// order. group_start[k]: the first position of the k-th group drawn.
struct Order {
  std::vector<size_t> rank;
  std::vector<size_t> group_start;
  std::vector<std::string> names;  // of the groups, in the order drawn
  size_t grouped = 0;              // the positions of ranks with a group: [0, grouped)
};
Order order_of(const Json& doc, size_t n) {
  const auto& roster = array(doc, "roster");
  std::vector<std::string> names;
  std::vector<std::vector<size_t>> members;
  std::vector<size_t> none;
  for (size_t r = 0; r < n; ++r) {
    const std::string g = r < roster.size() ? text(roster[r], "group") : "";
    if (g.empty()) {
      none.push_back(r);
      continue;
    }
    auto it = std::find(names.begin(), names.end(), g);
    if (it == names.end()) {
      names.push_back(g);
      members.emplace_back();
      it = names.end() - 1;
    }
    members[size_t(it - names.begin())].push_back(r);
  }
  Order o;
  for (const auto& m : members) {
    o.group_start.push_back(o.rank.size());
    o.rank.insert(o.rank.end(), m.begin(), m.end());
  }
  o.names = names;
  o.grouped = o.rank.size();
  o.rank.insert(o.rank.end(), none.begin(), none.end());
  return o;
}

// The key at (kx, top), downward: shares of the best pair, the failed and unmeasured colours, the
// best pair's figure.
void heat_key(svg::Canvas& c, double kx, double top, std::optional<double> best,
              const std::string& figure) {
  const double shares[] = {1.0, 0.9, 0.8, 0.7, 0.6, 0.5};
  for (size_t k = 0; k < std::size(shares); ++k) {
    c.rect(kx, top + 16 * double(k), 14, 14, colour(shares[k]));
    c.text(kx + 20, top + 16 * double(k) + 11,
           fmt::format("{}{:.0f}% of the best", k + 1 == std::size(shares) ? "\u2264 " : "",
                       shares[k] * 100),
           {svg::Anchor::start, 10});
  }
  c.rect(kx, top + 16 * 6, 14, 14, "#4d4d4d");
  c.text(kx + 20, top + 16 * 6 + 11, "failed", {svg::Anchor::start, 10});
  c.rect(kx, top + 16 * 7, 14, 14, "#f0f0f0");
  c.text(kx + 20, top + 16 * 7 + 11, "not measured", {svg::Anchor::start, 10});
  if (best)
    c.text(kx, top + 16 * 9,
           fmt::format("best {} {}", svg::compact(*best * unit_scale(figure)), unit_name(figure)),
           {svg::Anchor::start, 10, "#333", true});
}

// The best pair's figure: the highest, or the lowest of a latency; nullopt when none is above 0.
std::optional<double> best_of(const Grid& g, const std::string& figure) {
  std::optional<double> best;
  for (const auto& row : g.cells)
    for (const auto& v : row)
      if (v && *v > 0)
        best = best ? (higher_is_better(figure) ? std::max(*best, *v) : std::min(*best, *v)) : *v;
  return best;
}

// Cells at least this wide (px) carry their figure as a number: up to 28 ranks drawn.
constexpr double kNumberedCell = 20;

// Where the heatmap's cells begin: room for the host names on the left, the ranks above.
constexpr double kCellsLeft = 110, kCellsTop = 40;

// Position p's labels: the host and rank left of its row, the rank above its column.
void rank_labels(svg::Canvas& c, size_t p, const std::string& host, size_t rank, double cell) {
  c.text(kCellsLeft - 4, kCellsTop + cell * (double(p) + 0.7), fmt::format("{} {}", host, rank),
         {svg::Anchor::end, std::min(11.0, cell * 0.8)});
  c.text(kCellsLeft + cell * (double(p) + 0.5), kCellsTop - 4, std::to_string(rank),
         {svg::Anchor::middle, std::min(11.0, cell * 0.8)});
}

std::string heatmap(const Json& doc, const Grid& g, const std::string& title,
                    const std::string& figure) {
  const double cell = std::clamp(560.0 / double(std::max<size_t>(g.n, 1)), 6.0, 32.0);
  const double left = kCellsLeft, top = kCellsTop;
  svg::Canvas c(left + cell * double(g.n) + 150, top + cell * double(g.n) + 20, title);
  const std::optional<double> best = best_of(g, figure);
  const auto& roster = array(doc, "roster");
  const bool labels = cell >= 10;
  const Order order = order_of(doc, g.n);
  for (size_t pi = 0; pi < g.n; ++pi) {
    const size_t i = order.rank[pi];
    if (labels) rank_labels(c, pi, i < roster.size() ? text(roster[i], "host") : "", i, cell);
    for (size_t pj = 0; pj < g.n; ++pj) {
      const size_t j = order.rank[pj];
      const double x = left + cell * double(pj), y = top + cell * double(pi);
      if (i == j) {
        c.rect(x, y, cell, cell, "#ffffff", "#dddddd");
        continue;
      }
      if (g.failed.count({i, j})) {
        c.rect(x, y, cell, cell, "#4d4d4d", "#ffffff");
        if (labels)
          c.text(x + cell / 2, y + cell * 0.7, "\u00d7",
                 {svg::Anchor::middle, cell * 0.6, "#ffffff"});
        continue;
      }
      const auto& v = g.cells[i][j];
      if (!v || !best) {
        c.rect(x, y, cell, cell, "#f0f0f0", "#ffffff");
        continue;
      }
      const double share = higher_is_better(figure) ? *v / *best : (*v > 0 ? *best / *v : 0);
      c.rect(x, y, cell, cell, colour(share), "#ffffff");
      // The figure itself where it fits; the colour alone says only how far from the best.
      if (cell >= kNumberedCell)
        c.text(x + cell / 2, y + cell * 0.62, svg::compact(*v * unit_scale(figure)),
               {svg::Anchor::middle, std::min(10.0, cell * 0.32), "#000"});
    }
  }
  // Each group framed: a line before each group but the first, across and down.
  for (size_t k = 1; k < order.group_start.size(); ++k) {
    const double at = double(order.group_start[k]) * cell;
    c.line(left, top + at, left + cell * double(g.n), top + at, "#000000", 1.5);
    c.line(left + at, top, left + at, top + cell * double(g.n), "#000000", 1.5);
  }
  c.text(left - 4, top - 4, "client \\ server", {svg::Anchor::end, 10, "#666"});
  heat_key(c, left + cell * double(g.n) + 20, top, best, figure);
  return c.str();
}

// The raster's palette indices: the diagonal, a pair not measured, a failed pair, then the shares
// of the best pair from half or less (kShare0) to the best (255).
constexpr uint8_t kDiagonal = 0, kUnmeasured = 1, kFailed = 2, kShare0 = 3;

std::vector<png::Rgb> raster_palette() {
  std::vector<png::Rgb> p = {{255, 255, 255}, {0xf0, 0xf0, 0xf0}, {0x4d, 0x4d, 0x4d}};
  for (int k = kShare0; k < 256; ++k)
    p.push_back(colour_rgb(0.5 + 0.5 * double(k - kShare0) / (255.0 - kShare0)));
  return p;
}

uint8_t pixel(const Grid& g, size_t i, size_t j, std::optional<double> best,
              const std::string& figure) {
  if (i == j) return kDiagonal;
  if (g.failed.count({i, j})) return kFailed;
  const auto& v = g.cells[i][j];
  if (!v || !best) return kUnmeasured;
  const double share = higher_is_better(figure) ? *v / *best : (*v > 0 ? *best / *v : 0);
  const double u = (std::clamp(share, 0.5, 1.0) - 0.5) / 0.5;
  return uint8_t(kShare0 + std::lround(u * (255 - kShare0)));
}

// The raster's geometry: the image's square, and the column beside it (group matrix, key).
constexpr double kRasterLeft = 110, kRasterTop = 40, kRasterSide = 600;

// How many ranks a pixel's side covers: 1 up to kRasterSide ranks, then as many as bring the
// image to kRasterSide pixels or fewer, so that the browser only ever scales it up (scaled down,
// it would drop rows: a slow host's line would vanish).
size_t pairs_per_pixel(size_t n) {
  return std::max<size_t>(1, (n + size_t(kRasterSide) - 1) / size_t(kRasterSide));
}

// The pixel that shows a block of pairs shows its worst: a failed pair, else the smallest share
// of the best, else one not measured; the diagonal only when that is all there is.
uint8_t worse_pixel(uint8_t a, uint8_t b) {
  auto badness = [](uint8_t p) {
    return p == kFailed ? 1000 : p >= kShare0 ? 500 - p : p == kUnmeasured ? 1 : 0;
  };
  return badness(b) > badness(a) ? b : a;
}
constexpr double kBesideX = kRasterLeft + kRasterSide + 30, kBesideWidth = 220;

// Each group's name beside its band of rows and a line before each group but the first;
// without groups, rank numbers every few hundred.
void raster_frames(svg::Canvas& c, const Order& order, size_t n) {
  const double px = kRasterSide / double(n), left = kRasterLeft, top = kRasterTop;
  if (order.group_start.empty()) {
    for (double t : svg::nice_ticks(0, double(n), 4)) {
      if (t >= double(n)) continue;
      c.text(left - 4, top + px * (t + 0.5) + 4, fmt::format("{:.0f}", t), {svg::Anchor::end, 10});
      c.text(left + px * (t + 0.5), top - 4, fmt::format("{:.0f}", t), {svg::Anchor::middle, 10});
    }
    return;
  }
  for (size_t k = 0; k < order.group_start.size(); ++k) {
    const size_t from = order.group_start[k];
    const size_t to = k + 1 < order.group_start.size() ? order.group_start[k + 1] : order.grouped;
    const double band = px * double(to - from);
    if (band >= 8)
      c.text(left - 4, top + px * double(from) + band / 2 + 4, order.names[k],
             {svg::Anchor::end, std::min(11.0, band * 0.8)});
    if (k == 0) continue;
    c.line(left, top + px * double(from), left + kRasterSide, top + px * double(from), "#333333",
           0.6);
    c.line(left + px * double(from), top, left + px * double(from), top + kRasterSide, "#333333",
           0.6);
  }
}

// The group matrix beside the raster: a square per pair of groups, coloured by its median's share
// of the best group pair's, its figure where it fits, the groups named on the right. Returns the
// height it took (0 without groups).
double group_squares(svg::Canvas& c, const Json& groups, const std::string& figure) {
  const Json& names = array(groups, "names");
  const Json& cells = array(groups, "cells");
  const size_t k = names.size();
  if (k == 0 || cells.size() != k) return 0;
  const double side = std::clamp(std::floor(200.0 / double(k)), 2.0, 32.0);
  std::optional<double> best;
  for (const Json& row : cells)
    for (const Json& v : row)
      if (v.is_number() && v.get<double>() > 0)
        best = best ? (higher_is_better(figure) ? std::max(*best, v.get<double>())
                                                : std::min(*best, v.get<double>()))
                    : v.get<double>();
  const double top = kRasterTop + 14;
  c.text(kBesideX, kRasterTop + 4, "by group: the median", {svg::Anchor::start, 10, "#333", true});
  for (size_t a = 0; a < k; ++a) {
    for (size_t b = 0; b < k; ++b) {
      const Json& v = cells[a].is_array() && b < cells[a].size() ? cells[a][b] : Json();
      const double x = kBesideX + side * double(b), y = top + side * double(a);
      if (!v.is_number() || !best || !std::isfinite(v.get<double>())) {
        c.rect(x, y, side, side, "#f0f0f0", side >= 8 ? "#ffffff" : "none");
        continue;
      }
      const double m = v.get<double>();
      c.rect(x, y, side, side,
             colour(higher_is_better(figure) ? m / *best : (m > 0 ? *best / m : 0)),
             side >= 8 ? "#ffffff" : "none");
      if (side >= 26)
        c.text(x + side / 2, y + side * 0.62, svg::compact(m * unit_scale(figure)),
               {svg::Anchor::middle, 9, "#000"});
    }
    if (side >= 8 && names[a].is_string())
      c.text(kBesideX + side * double(k) + 4, top + side * (double(a) + 0.5) + 4,
             names[a].get<std::string>(), {svg::Anchor::start, std::min(10.0, side * 0.8)});
  }
  return 14 + side * double(k);
}

// Above kRasterRanks: the heatmap as an image of a pixel per pair, in the order and frames of the
// groups, the group matrix and the key beside it.
std::string raster_heatmap(const Json& doc, const Grid& g, const Json& groups,
                           const std::string& title, const std::string& figure) {
  const std::optional<double> best = best_of(g, figure);
  const Order order = order_of(doc, g.n);
  const size_t f = pairs_per_pixel(g.n), side = (g.n + f - 1) / f;
  std::vector<uint8_t> pixels(side * side, kDiagonal);
  for (size_t pi = 0; pi < g.n; ++pi)
    for (size_t pj = 0; pj < g.n; ++pj) {
      uint8_t& p = pixels[pi / f * side + pj / f];
      p = worse_pixel(p, pixel(g, order.rank[pi], order.rank[pj], best, figure));
    }
  svg::Canvas c(kBesideX + kBesideWidth, kRasterTop + kRasterSide + 20, title);
  c.image(kRasterLeft, kRasterTop, kRasterSide, kRasterSide,
          png::data_uri(png::indexed(side, side, pixels, raster_palette())), true);
  raster_frames(c, order, g.n);
  c.text(kRasterLeft - 4, kRasterTop - 16, "client \\ server", {svg::Anchor::end, 10, "#666"});
  const double used = group_squares(c, groups, figure);
  heat_key(c, kBesideX, kRasterTop + used + (used > 0 ? 24 : 0), best, figure);
  return c.str();
}

// The group matrix as a table: each pair of groups' median and how many pairs it is the median
// of; "" without groups or with more than 16 (the squares beside the raster show them).
std::string group_table(const Json& groups, const std::string& figure) {
  const Json& names = array(groups, "names");
  const Json& cells = array(groups, "cells");
  const Json& pairs = array(groups, "pairs");
  if (names.empty() || names.size() > 16 || cells.size() != names.size()) return "";
  std::vector<std::string> head = {"client group \\ server group"};
  for (const Json& n : names)
    head.push_back(n.is_string() ? n.get<std::string>() : "");
  Table t(head, 1);
  for (size_t a = 0; a < names.size(); ++a) {
    std::vector<std::string> row = {head[a + 1]};
    for (size_t b = 0; b < names.size(); ++b) {
      const Json& v = cells[a].is_array() && b < cells[a].size() ? cells[a][b] : Json();
      const Json& p =
          a < pairs.size() && pairs[a].is_array() && b < pairs[a].size() ? pairs[a][b] : Json();
      const std::optional<double> m =
          v.is_number() ? std::optional<double>(v.get<double>() * unit_scale(figure))
                        : std::nullopt;
      row.push_back(
          m ? sig3(m) + " (" +
                  fixed(p.is_number() ? std::optional<double>(p.get<double>()) : std::nullopt, 0) +
                  ")"
            : dash());
    }
    t.row(row);
  }
  return t.str();
}

std::string histogram(const Grid& g, const std::string& title, const std::string& figure) {
  std::vector<double> v;
  for (const auto& row : g.cells)
    for (const auto& x : row)
      if (x) v.push_back(*x * unit_scale(figure));
  if (v.size() < 2) return "";
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  const int bins = 12;
  const double width = (*hi - *lo) / bins;
  std::vector<int> count(bins, 0);
  for (double x : v) {
    int b = width > 0 ? int((x - *lo) / width) : 0;
    ++count[std::clamp(b, 0, bins - 1)];
  }
  const int most = *std::max_element(count.begin(), count.end());
  svg::Canvas c(520, 180, title);
  const double left = 40, bottom = 150, bw = 440.0 / bins;
  for (int b = 0; b < bins; ++b) {
    const double h = most ? 120.0 * count[b] / most : 0;
    c.rect(left + bw * b + 1, bottom - h, bw - 2, h, "#4575b4");
    if (count[b])
      c.text(left + bw * (b + 0.5), bottom - h - 3, std::to_string(count[b]),
             {svg::Anchor::middle, 9});
  }
  c.line(left, bottom, left + 440, bottom, "#333");
  c.text(left, bottom + 14, svg::compact(*lo), {svg::Anchor::start, 10});
  c.text(left + 440, bottom + 14, svg::compact(*hi), {svg::Anchor::end, 10});
  c.text(left + 220, bottom + 26, "pairs by " + figure + ", " + unit_name(figure),
         {svg::Anchor::middle, 10});
  return c.str();
}

std::string worst_lines(const Json& doc, size_t transport, const std::string& figure) {
  const auto& names = array(at(doc, "fleet"), "transports");
  const std::string name = transport < names.size() && names[transport].is_string()
                               ? names[transport].get<std::string>()
                               : "";
  const Json& m = at(at(at(doc, "matrices"), name), figure);
  const auto& roster = array(doc, "roster");
  Table t({"", "rank", "host", "cells", "min", "median", "max"}, 3);
  for (const char* side : {"rows", "columns"}) {
    std::vector<const Json*> lines;
    for (const Json& l : array(m, side))
      if (number(l, "median")) lines.push_back(&l);
    std::sort(lines.begin(), lines.end(), [&](const Json* a, const Json* b) {
      return higher_is_better(figure) ? *number(*a, "median") < *number(*b, "median")
                                      : *number(*a, "median") > *number(*b, "median");
    });
    if (lines.size() > 5) lines.resize(5);
    for (const Json* l : lines) {
      const auto rank = number(*l, "rank");
      const std::string host = rank && *rank >= 0 && *rank < double(roster.size())
                                   ? text(roster[size_t(*rank)], "host")
                                   : "";
      auto scaled = [&](const char* k) {
        auto v = number(*l, k);
        return v ? std::optional<double>(*v * unit_scale(figure)) : std::nullopt;
      };
      t.row({std::string(side) == "rows" ? "as client" : "as server", fixed(rank, 0), host,
             fixed(number(*l, "cells"), 0), sig3(scaled("min")), sig3(scaled("median")),
             sig3(scaled("max"))});
    }
  }
  return t.str();
}

// The matrices a transport has, the headline first.
std::vector<std::string> figures_of(const Json& doc, const std::string& transport) {
  static const char* const kOrder[] = {
      "throughput", "throughput_c2s", "throughput_s2c", "transaction_rate", "p50", "p99"};
  std::vector<std::string> out;
  const Json& per = at(at(doc, "matrices"), transport);
  for (const char* f : kOrder)
    if (per.is_object() && per.contains(f)) out.push_back(f);
  return out;
}

// A ratio's colour: 1 (unchanged) white, slower toward red (half or less), faster toward blue
// (one and a half or more).
png::Rgb ratio_rgb(double r) {
  auto mix = [](double a, double b, double u) { return uint8_t(std::lround(a + (b - a) * u)); };
  if (r < 1) {
    const double u = std::clamp((1 - r) / 0.5, 0.0, 1.0);
    return {mix(247, 215, u), mix(247, 48, u), mix(247, 39, u)};
  }
  const double u = std::clamp((r - 1) / 0.5, 0.0, 1.0);
  return {mix(247, 69, u), mix(247, 117, u), mix(247, 180, u)};
}
std::string ratio_colour(double r) {
  const png::Rgb c = ratio_rgb(r);
  return fmt::format("#{:02x}{:02x}{:02x}", c.r, c.g, c.b);
}

// A compare's raster: palette index kDiagonal, kUnmeasured (not in both runs), then ratios from
// half or less (kRatio0) through unchanged (kRatioOne) to one and a half or more (255).
constexpr uint8_t kRatio0 = 2, kRatioOne = 128;

uint8_t ratio_pixel(double r) {
  if (r < 1)
    return uint8_t(kRatioOne - std::lround((1 - std::max(r, 0.5)) / 0.5 * (kRatioOne - kRatio0)));
  return uint8_t(kRatioOne + std::lround((std::min(r, 1.5) - 1) / 0.5 * (255 - kRatioOne)));
}
double pixel_ratio(uint8_t p) {
  return p <= kRatioOne ? 1 - 0.5 * double(kRatioOne - p) / (kRatioOne - kRatio0)
                        : 1 + 0.5 * double(p - kRatioOne) / (255 - kRatioOne);
}
std::vector<png::Rgb> ratio_palette() {
  std::vector<png::Rgb> p = {{255, 255, 255}, {0xf0, 0xf0, 0xf0}};
  for (int k = kRatio0; k < 256; ++k)
    p.push_back(ratio_rgb(pixel_ratio(uint8_t(k))));
  return p;
}

// The ratios' colours, from the top left corner (x, y).
void ratio_key(svg::Canvas& c, double x, double y) {
  const double keys[] = {1.5, 1.25, 1.0, 0.9, 0.75, 0.5};
  for (size_t k = 0; k < std::size(keys); ++k) {
    c.rect(x, y + 16 * double(k), 14, 14, ratio_colour(keys[k]), "#999999");
    c.text(x + 20, y + 16 * double(k) + 11, fmt::format("{:.2f} x the first run", keys[k]),
           {svg::Anchor::start, 10});
  }
  c.rect(x, y + 16 * 6, 14, 14, "#f0f0f0");
  c.text(x + 20, y + 16 * 6 + 11, "not in both", {svg::Anchor::start, 10});
}

// Above kRasterRanks: the ratio matrix as an image, a pixel per pair (above kRasterSide ranks a
// pixel per block of pairs, showing the pair that moved most, so that one pair's move is never
// averaged away), rows and columns the first run's ranks; the key beside it.
std::string ratio_raster(const Json& rows, const std::string& title) {
  const size_t n = std::min(rows.size(), kMaxRanksRastered);
  const size_t f = pairs_per_pixel(n), side = (n + f - 1) / f;
  std::vector<uint8_t> pixels(side * side, kDiagonal);
  auto moved = [](uint8_t p) { return p >= kRatio0 ? std::abs(int(p) - int(kRatioOne)) + 1 : 0; };
  for (size_t i = 0; i < n; ++i) {
    const Json& row = rows[i];
    for (size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      const bool has = row.is_array() && j < row.size() && row[j].is_number() &&
                       std::isfinite(row[j].get<double>());
      const uint8_t p = has ? ratio_pixel(row[j].get<double>()) : kUnmeasured;
      uint8_t& at = pixels[i / f * side + j / f];
      if (at == kDiagonal || moved(p) > moved(at)) at = p;
    }
  }
  svg::Canvas c(kBesideX + kBesideWidth, kRasterTop + kRasterSide + 20, title);
  c.image(kRasterLeft, kRasterTop, kRasterSide, kRasterSide,
          png::data_uri(png::indexed(side, side, pixels, ratio_palette())), true);
  c.text(kRasterLeft - 4, kRasterTop - 4, "client \\ server", {svg::Anchor::end, 10, "#666"});
  ratio_key(c, kBesideX, kRasterTop);
  return c.str();
}

// One compare entry's ratio matrix: rows and columns are the first run's ranks.
std::string ratio_heatmap(const Json& entry, const std::string& title) {
  const Json& rows = array(entry, "ratio");
  if (rows.size() > kRasterRanks) return ratio_raster(rows, title);
  const size_t n = rows.size();
  const double cell = std::clamp(560.0 / double(std::max<size_t>(n, 1)), 6.0, 32.0);
  const double left = 50, top = 40;
  svg::Canvas c(left + cell * double(n) + 170, top + cell * double(n) + 20, title);
  const bool labels = cell >= 10;
  for (size_t i = 0; i < n; ++i) {
    if (labels) {
      c.text(left - 4, top + cell * (double(i) + 0.7), std::to_string(i),
             {svg::Anchor::end, std::min(11.0, cell * 0.8)});
      c.text(left + cell * (double(i) + 0.5), top - 4, std::to_string(i),
             {svg::Anchor::middle, std::min(11.0, cell * 0.8)});
    }
    const Json& row = rows[i];
    for (size_t j = 0; j < n; ++j) {
      const double x = left + cell * double(j), y = top + cell * double(i);
      const bool has = row.is_array() && j < row.size() && row[j].is_number() &&
                       std::isfinite(row[j].get<double>());
      if (i == j || !has) {
        c.rect(x, y, cell, cell, i == j ? "#ffffff" : "#f0f0f0", "#dddddd");
        continue;
      }
      const double r = row[j].get<double>();
      c.rect(x, y, cell, cell, ratio_colour(r), "#ffffff");
      if (cell >= kNumberedCell)
        c.text(x + cell / 2, y + cell * 0.62, fmt::format("{:.2f}", r),
               {svg::Anchor::middle, std::min(10.0, cell * 0.32), "#000"});
    }
  }
  c.text(left - 4, top - 4, "client \\ server", {svg::Anchor::end, 10, "#666"});
  ratio_key(c, left + cell * double(n) + 20, top);
  return c.str();
}

// --check's suspects (fleet/suspect.hpp): who the failing pairs share, with the evidence.
std::string suspects(const Json& doc) {
  const Json& s = at(doc, "suspects");
  if (!s.is_object()) return "";
  std::string out = heading(3, "suspects") + meta(text(s, "summary"));
  const Json& named = array(s, "named");
  if (named.empty()) return out;
  Table t({"suspect", "kind", "its pairs failing", "of", "pairs without it failing", "of", "check",
           "evidence"},
          2);
  for (const Json& n : named) {
    const std::string adapter = text(n, "adapter");
    t.row({text(n, "host") + (adapter.empty() ? "" : " " + adapter), text(n, "kind"),
           fixed(number(n, "failing"), 0), fixed(number(n, "pairs"), 0),
           fixed(number(n, "others_failing"), 0), fixed(number(n, "others"), 0), text(n, "check"),
           text(n, "evidence")});
  }
  return out + t.str();
}

// A fleet above kRasterRanks: the raster heatmap with the group matrix beside it, the matrix's
// figures in a table under it.
std::string raster(const Json& doc, const Grid& g, size_t transport, const std::string& title,
                   const std::string& figure) {
  const auto& names = array(at(doc, "fleet"), "transports");
  const std::string name = transport < names.size() && names[transport].is_string()
                               ? names[transport].get<std::string>()
                               : "";
  const Json& groups = at(at(at(at(doc, "matrices"), name), figure), "groups");
  const Order order = order_of(doc, g.n);
  const size_t f = pairs_per_pixel(g.n);
  std::string caption =
      f == 1 ? fmt::format("a pixel per pair of the {} ranks", g.n)
             : fmt::format("the {} ranks' pairs, a pixel per {} x {} of them showing the worst",
                           g.n, f, f);
  caption += ": row the client rank (a stream's sender), column the server rank";
  if (!order.group_start.empty())
    caption += fmt::format(
        "; ordered by group ({} groups), a line between groups; beside it, the median of the "
        "pairs between each two groups",
        order.names.size());
  return html::figure(raster_heatmap(doc, g, groups, title, figure), caption) +
         group_table(groups, figure);
}

}  // namespace

std::string fleet_section(const Json& doc) {
  const Json& f = at(doc, "fleet");
  const auto spread_ns = number(f, "start_spread_max_ns");
  std::string out = meta(fmt::format(
      "{} ranks launched by {}; pattern {}, {} ordered pairs, {} at once; workload {}; {}",
      fixed(number(f, "size"), 0), text(f, "launcher"), text(at(f, "plan"), "pattern"),
      fixed(number(at(f, "plan"), "ordered_pairs"), 0),
      text(at(f, "plan"), "concurrency") == "isolated" ? "one pair" : "a round",
      text(f, "workload"),
      spread_ns ? "the pairs of a step started at most " + fixed(*spread_ns / 1e6, 2) + " ms apart"
                : std::string("the start spread was not measured (no step ran two pairs)")));
  const auto& names = array(f, "transports");
  for (size_t t = 0; t < names.size(); ++t) {
    if (!names[t].is_string()) continue;
    const std::string name = names[t].get<std::string>();
    for (const std::string& figure : figures_of(doc, name)) {
      out += heading(3, name + ": " + figure + ", " + unit_name(figure));
      const Grid g = grid_of(doc, t, figure);
      const std::string title = name + " " + figure + " per pair";
      const bool grouped = !order_of(doc, g.n).group_start.empty();
      if (g.n > kRasterRanks) {
        out += raster(doc, g, t, title, figure);
      } else {
        out += html::figure(heatmap(doc, g, title, figure),
                            std::string("row: the client rank (a stream's sender), column: the "
                                        "server rank") +
                                (grouped ? "; ordered by group, a line between groups" : ""));
      }
      out += heading(4, "worst rows and columns (by median)");
      out += worst_lines(doc, t, figure);
      const std::string h = histogram(g, title + ", histogram", figure);
      if (!h.empty()) out += html::figure(h, "how the pairs' " + figure + " spread");
    }
  }
  out += suspects(doc);
  std::vector<std::string> errors;
  for (const Json& e : array(f, "errors"))
    if (e.is_string()) errors.push_back(e.get<std::string>());
  return out + error_list(errors);
}

}  // namespace mtperf::html

namespace mtperf::html {

std::string fleet_compare_section(const Json& doc) {
  std::string out = meta(
      "each cell: the second run's figure over the first's for the same pair, the ranks paired "
      "by host and adapter (rows and columns: the first run's ranks)");
  for (const Json& e : array(doc, "fleet_compare")) {
    const std::string title = text(e, "b") + " / " + text(e, "a") + ", " + text(e, "figure");
    out += heading(3, title);
    const size_t n = array(e, "ratio").size();
    std::string caption = "row: the client rank, column: the server rank; white: unchanged";
    if (n > kRasterRanks && pairs_per_pixel(n) > 1)
      caption += fmt::format("; a pixel per {0} x {0} pairs, showing the one that moved most",
                             pairs_per_pixel(n));
    out += html::figure(ratio_heatmap(e, title + " per pair"), caption);
    const auto count = number(e, "moved_count");
    out += heading(4, fmt::format("pairs that moved beyond 10%: {}", fixed(count, 0)));
    const Json& moved = array(e, "moved");
    if (moved.empty()) continue;
    Table t({"client rank", "server rank", "ratio"}, 0);
    for (const Json& m : moved)
      t.row({fixed(number(m, "src"), 0), fixed(number(m, "dst"), 0), sig3(number(m, "ratio"))});
    out += t.str();
  }
  return out;
}

}  // namespace mtperf::html
