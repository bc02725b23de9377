// PNG plots for seismic images (gathers, snapshots, models) and line plots (misfit curves).
// Everything is rasterised here into an 8-bit RGB canvas with a built-in 5x7 font (antialiased) and
// written with libpng's simplified API to "<path>.tmp", which is then renamed over <path>.
#include "png_plot.hpp"

#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string_view>

namespace specwave::io {
namespace {

struct Rgb {
  std::uint8_t r, g, b;
};
constexpr Rgb kWhite{255, 255, 255}, kBlack{0, 0, 0}, kMagenta{255, 0, 255}, kGrid{228, 228, 228}, kText{20, 20, 20};

// 5x7 glyphs for ASCII 32..126, one byte per column (5 columns), bit 0 = top row; bit 7 is an
// eighth row used only by the descenders of g, j, p, q, y.
constexpr std::uint8_t kFont[95][5] = {
    {0x00, 0x00, 0x00, 0x00, 0x00}, {0x00, 0x00, 0x5F, 0x00, 0x00}, {0x00, 0x07, 0x00, 0x07, 0x00},  //  !"
    {0x14, 0x7F, 0x14, 0x7F, 0x14}, {0x24, 0x2A, 0x7F, 0x2A, 0x12}, {0x23, 0x13, 0x08, 0x64, 0x62},  // #$%
    {0x36, 0x49, 0x55, 0x22, 0x50}, {0x00, 0x05, 0x03, 0x00, 0x00}, {0x00, 0x1C, 0x22, 0x41, 0x00},  // &'(
    {0x00, 0x41, 0x22, 0x1C, 0x00}, {0x08, 0x2A, 0x1C, 0x2A, 0x08}, {0x08, 0x08, 0x3E, 0x08, 0x08},  // )*+
    {0x00, 0x50, 0x30, 0x00, 0x00}, {0x08, 0x08, 0x08, 0x08, 0x08}, {0x00, 0x60, 0x60, 0x00, 0x00},  // ,-.
    {0x20, 0x10, 0x08, 0x04, 0x02}, {0x3E, 0x51, 0x49, 0x45, 0x3E}, {0x00, 0x42, 0x7F, 0x40, 0x00},  // /01
    {0x42, 0x61, 0x51, 0x49, 0x46}, {0x21, 0x41, 0x45, 0x4B, 0x31}, {0x18, 0x14, 0x12, 0x7F, 0x10},  // 234
    {0x27, 0x45, 0x45, 0x45, 0x39}, {0x3C, 0x4A, 0x49, 0x49, 0x30}, {0x01, 0x71, 0x09, 0x05, 0x03},  // 567
    {0x36, 0x49, 0x49, 0x49, 0x36}, {0x06, 0x49, 0x49, 0x29, 0x1E}, {0x00, 0x36, 0x36, 0x00, 0x00},  // 89:
    {0x00, 0x56, 0x36, 0x00, 0x00}, {0x08, 0x14, 0x22, 0x41, 0x00}, {0x14, 0x14, 0x14, 0x14, 0x14},  // ;<=
    {0x00, 0x41, 0x22, 0x14, 0x08}, {0x02, 0x01, 0x51, 0x09, 0x06}, {0x32, 0x49, 0x79, 0x41, 0x3E},  // >?@
    {0x7E, 0x11, 0x11, 0x11, 0x7E}, {0x7F, 0x49, 0x49, 0x49, 0x36}, {0x3E, 0x41, 0x41, 0x41, 0x22},  // ABC
    {0x7F, 0x41, 0x41, 0x22, 0x1C}, {0x7F, 0x49, 0x49, 0x49, 0x41}, {0x7F, 0x09, 0x09, 0x09, 0x01},  // DEF
    {0x3E, 0x41, 0x49, 0x49, 0x7A}, {0x7F, 0x08, 0x08, 0x08, 0x7F}, {0x00, 0x41, 0x7F, 0x41, 0x00},  // GHI
    {0x20, 0x40, 0x41, 0x3F, 0x01}, {0x7F, 0x08, 0x14, 0x22, 0x41}, {0x7F, 0x40, 0x40, 0x40, 0x40},  // JKL
    {0x7F, 0x02, 0x0C, 0x02, 0x7F}, {0x7F, 0x04, 0x08, 0x10, 0x7F}, {0x3E, 0x41, 0x41, 0x41, 0x3E},  // MNO
    {0x7F, 0x09, 0x09, 0x09, 0x06}, {0x3E, 0x41, 0x51, 0x21, 0x5E}, {0x7F, 0x09, 0x19, 0x29, 0x46},  // PQR
    {0x46, 0x49, 0x49, 0x49, 0x31}, {0x01, 0x01, 0x7F, 0x01, 0x01}, {0x3F, 0x40, 0x40, 0x40, 0x3F},  // STU
    {0x1F, 0x20, 0x40, 0x20, 0x1F}, {0x3F, 0x40, 0x38, 0x40, 0x3F}, {0x63, 0x14, 0x08, 0x14, 0x63},  // VWX
    {0x07, 0x08, 0x70, 0x08, 0x07}, {0x61, 0x51, 0x49, 0x45, 0x43}, {0x00, 0x7F, 0x41, 0x41, 0x00},  // YZ[
    {0x02, 0x04, 0x08, 0x10, 0x20}, {0x00, 0x41, 0x41, 0x7F, 0x00}, {0x04, 0x02, 0x01, 0x02, 0x04},  // \]^
    {0x40, 0x40, 0x40, 0x40, 0x40}, {0x00, 0x01, 0x02, 0x04, 0x00}, {0x20, 0x54, 0x54, 0x54, 0x78},  // _`a
    {0x7F, 0x48, 0x44, 0x44, 0x38}, {0x38, 0x44, 0x44, 0x44, 0x20}, {0x38, 0x44, 0x44, 0x48, 0x7F},  // bcd
    {0x38, 0x54, 0x54, 0x54, 0x18}, {0x08, 0x7E, 0x09, 0x01, 0x02}, {0x18, 0xA4, 0xA4, 0xA4, 0x7C},  // efg
    {0x7F, 0x08, 0x04, 0x04, 0x78}, {0x00, 0x44, 0x7D, 0x40, 0x00}, {0x40, 0x80, 0x84, 0x7D, 0x00},  // hij
    {0x7F, 0x10, 0x28, 0x44, 0x00}, {0x00, 0x41, 0x7F, 0x40, 0x00}, {0x7C, 0x04, 0x18, 0x04, 0x78},  // klm
    {0x7C, 0x08, 0x04, 0x04, 0x78}, {0x38, 0x44, 0x44, 0x44, 0x38}, {0xFC, 0x24, 0x24, 0x24, 0x18},  // nop
    {0x18, 0x24, 0x24, 0x24, 0xFC}, {0x7C, 0x08, 0x04, 0x04, 0x08}, {0x48, 0x54, 0x54, 0x54, 0x20},  // qrs
    {0x04, 0x3F, 0x44, 0x40, 0x20}, {0x3C, 0x40, 0x40, 0x20, 0x7C}, {0x1C, 0x20, 0x40, 0x20, 0x1C},  // tuv
    {0x3C, 0x40, 0x30, 0x40, 0x3C}, {0x44, 0x28, 0x10, 0x28, 0x44}, {0x1C, 0xA0, 0xA0, 0xA0, 0x7C},  // wxy
    {0x44, 0x64, 0x54, 0x4C, 0x44}, {0x00, 0x08, 0x36, 0x41, 0x00}, {0x00, 0x00, 0x7F, 0x00, 0x00},  // z{|
    {0x00, 0x41, 0x36, 0x08, 0x00}, {0x08, 0x04, 0x08, 0x10, 0x08},                                  // }~
};
constexpr int kAdvance = 6, kGlyphH = 7;  // glyph cell: 5 columns + 1 spacing, 7 rows (+1 descender row)

int text_w(std::string_view s, int scale) { return s.empty() ? 0 : (int(s.size()) * kAdvance - 1) * scale; }
int text_h(int scale) { return kGlyphH * scale; }

class Canvas {
 public:
  Canvas(int w, int h) : w_(w), h_(h), px_(std::size_t(w) * std::size_t(h) * 3, 255) {}
  int width() const { return w_; }
  int height() const { return h_; }
  const std::uint8_t* data() const { return px_.data(); }

  void set(int x, int y, Rgb c) {
    if (x < 0 || y < 0 || x >= w_ || y >= h_) return;
    std::uint8_t* p = &px_[(std::size_t(y) * std::size_t(w_) + std::size_t(x)) * 3];
    p[0] = c.r, p[1] = c.g, p[2] = c.b;
  }
  // Fills [x0, x1) x [y0, y1).
  void fill(int x0, int y0, int x1, int y1, Rgb c) {
    for (int y = std::max(y0, 0); y < std::min(y1, h_); ++y)
      for (int x = std::max(x0, 0); x < std::min(x1, w_); ++x) set(x, y, c);
  }
  // 1-pixel outline just outside the rectangle [x0, x1) x [y0, y1).
  void frame(int x0, int y0, int x1, int y1, Rgb c) {
    fill(x0 - 1, y0 - 1, x1 + 1, y0, c);
    fill(x0 - 1, y1, x1 + 1, y1 + 1, c);
    fill(x0 - 1, y0, x0, y1, c);
    fill(x1, y0, x1 + 1, y1, c);
  }
  // Segment of width `thick`, clipped (Liang-Barsky) to [cx0, cx1] x [cy0, cy1].
  void line(double x0, double y0, double x1, double y1, Rgb c, int thick, int cx0, int cy0, int cx1, int cy1) {
    double t0 = 0, t1 = 1;
    const double dx = x1 - x0, dy = y1 - y0;
    const double p[4] = {-dx, dx, -dy, dy}, q[4] = {x0 - cx0, cx1 - x0, y0 - cy0, cy1 - y0};
    for (int i = 0; i < 4; ++i) {
      if (p[i] == 0) {
        if (q[i] < 0) return;
      } else {
        const double t = q[i] / p[i];
        if (p[i] < 0)
          t0 = std::max(t0, t);
        else
          t1 = std::min(t1, t);
      }
    }
    if (t0 > t1) return;
    const double ax = x0 + t0 * dx, ay = y0 + t0 * dy, bx = x0 + t1 * dx, by = y0 + t1 * dy;
    const int steps = std::max(1, int(std::ceil(std::max(std::abs(bx - ax), std::abs(by - ay)))));
    const int lo = -(thick - 1) / 2;
    for (int i = 0; i <= steps; ++i) {
      const int x = int(std::lround(ax + (bx - ax) * i / steps)), y = int(std::lround(ay + (by - ay) * i / steps));
      fill(x + lo, y + lo, x + lo + thick, y + lo + thick, c);
    }
  }
  // Text with its top-left corner at (x, y). Vertical text reads bottom-to-top; (x, y) is then the
  // top-left corner of its (text_h wide, text_w tall) bounding box. Antialiased: each pixel takes the glyph's
  // coverage of it (4 x 4 samples) over the 5x7 cells, whose diagonal steps are joined by small corner triangles so
  // that slanted strokes read as strokes rather than staircases (glyph_covers).
  void text(int x, int y, std::string_view s, int scale, Rgb c, bool vertical = false) {
    const int total = int(s.size()) * kAdvance - 1;    // the text's length in glyph cells
    const int len = total * scale, depth = 8 * scale;  // along and across the text, in pixels
    constexpr int kSub = 4;
    for (int a = 0; a < len; ++a)
      for (int b = 0; b < depth; ++b) {
        int hits = 0;
        for (int sa = 0; sa < kSub; ++sa)
          for (int sb = 0; sb < kSub; ++sb) {
            const double u = (a + (sa + 0.5) / kSub) / scale, v = (b + (sb + 0.5) / kSub) / scale;
            const int glyph = int(u) / kAdvance;
            const double gu = u - glyph * kAdvance;
            if (glyph >= int(s.size()) || gu >= 5) continue;
            unsigned char ch = static_cast<unsigned char>(s[std::size_t(glyph)]);
            if (ch < 32 || ch > 126) ch = '?';
            hits += glyph_covers(kFont[ch - 32], gu, v);
          }
        if (hits == 0) continue;
        const int px = vertical ? x + b : x + a;
        const int py = vertical ? y + (len - 1 - a) : y + b;
        blend(px, py, c, double(hits) / (kSub * kSub));
      }
  }

 private:
  // Mixes c into the pixel with weight alpha.
  void blend(int x, int y, Rgb c, double alpha) {
    if (x < 0 || y < 0 || x >= w_ || y >= h_) return;
    std::uint8_t* p = &px_[(std::size_t(y) * std::size_t(w_) + std::size_t(x)) * 3];
    const auto mix = [alpha](std::uint8_t under, std::uint8_t over) {
      return std::uint8_t(std::lround(under + (over - under) * alpha));
    };
    p[0] = mix(p[0], c.r), p[1] = mix(p[1], c.g), p[2] = mix(p[2], c.b);
  }
  // Whether the point (u, v) of a glyph (in cells: u across 0..5, v down 0..8) is ink: inside a set cell, or in the
  // corner triangle of an unset cell whose two neighbours across that corner are set (a diagonal step).
  static bool glyph_covers(const std::uint8_t (&glyph)[5], double u, double v) {
    const auto on = [&](int col, int row) {
      return col >= 0 && col < 5 && row >= 0 && row < 8 && (glyph[col] >> row & 1);
    };
    const int i = int(u), j = int(v);
    const double fu = u - i, fv = v - j;
    if (on(i, j)) return true;
    return (on(i - 1, j) && on(i, j - 1) && fu + fv <= 0.5) ||            // upper-left corner
           (on(i + 1, j) && on(i, j - 1) && (1 - fu) + fv <= 0.5) ||      // upper-right
           (on(i - 1, j) && on(i, j + 1) && fu + (1 - fv) <= 0.5) ||      // lower-left
           (on(i + 1, j) && on(i, j + 1) && (1 - fu) + (1 - fv) <= 0.5);  // lower-right
  }

  int w_, h_;
  std::vector<std::uint8_t> px_;
};

// ---------------------------------------------------------------- colormaps
struct Stop {
  double t;
  Rgb c;
};
constexpr Stop kSeismicMap[] = {
    {0.0, {0, 0, 77}}, {0.25, {0, 0, 255}}, {0.5, {255, 255, 255}}, {0.75, {255, 0, 0}}, {1.0, {128, 0, 0}}};
constexpr Stop kGrayMap[] = {{0.0, {0, 0, 0}}, {1.0, {255, 255, 255}}};
constexpr Stop kViridisMap[] = {{0.0, {68, 1, 84}},    {0.1, {72, 36, 117}},  {0.2, {65, 68, 135}},
                                {0.3, {53, 95, 141}},  {0.4, {42, 120, 142}}, {0.5, {33, 145, 140}},
                                {0.6, {34, 168, 132}}, {0.7, {68, 191, 112}}, {0.8, {122, 209, 81}},
                                {0.9, {189, 223, 38}}, {1.0, {253, 231, 37}}};

Rgb colormap_at(Colormap cm, double t) {
  std::span<const Stop> stops = cm == Colormap::seismic        ? std::span<const Stop>(kSeismicMap)
                                : cm == Colormap::gray_seismic ? std::span<const Stop>(kGrayMap)
                                                               : std::span<const Stop>(kViridisMap);
  t = std::clamp(std::isnan(t) ? 0.5 : t, 0.0, 1.0);
  std::size_t i = 1;
  while (i + 1 < stops.size() && t > stops[i].t) ++i;
  const Stop &a = stops[i - 1], &b = stops[i];
  const double f = (t - a.t) / (b.t - a.t);
  auto mix = [f](std::uint8_t u, std::uint8_t v) { return std::uint8_t(std::lround(u + (v - u) * f)); };
  return {mix(a.c.r, b.c.r), mix(a.c.g, b.c.g), mix(a.c.b, b.c.b)};
}

// ---------------------------------------------------------------- numbers and ticks
// printf("%.*g") without the exponent padding: 1e+04 -> 1e4, 2.5e-05 -> 2.5e-5.
std::string compact_g(double v, int precision) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", precision, v);
  std::string s = buf;
  if (const auto e = s.find('e'); e != std::string::npos) {
    std::string mant = s.substr(0, e), exp = s.substr(e + 1);
    const bool neg = exp[0] == '-';
    exp.erase(0, exp.find_first_not_of("+-0"));
    s = mant + "e" + (neg ? "-" : "") + (exp.empty() ? "0" : exp);
  }
  return s == "-0" ? "0" : s;
}

struct Ticks {
  std::vector<double> values;
  double step = 1;
};

// 4-6 round-numbered ticks (steps 1, 2, 2.5, 5 x 10^k) inside [min(a,b), max(a,b)].
Ticks nice_ticks(double a, double b) {
  const double lo = std::min(a, b), hi = std::max(a, b);
  if (!std::isfinite(lo) || !std::isfinite(hi)) return {};
  if (!(hi > lo)) return {{lo}, 1};
  const int e0 = int(std::floor(std::log10(hi - lo)));
  Ticks best;
  double best_score = std::numeric_limits<double>::infinity();
  for (int e = e0 - 2; e <= e0 + 1; ++e)
    for (double m : {1.0, 2.0, 2.5, 5.0}) {
      const double step = m * std::pow(10.0, e);
      const double k0 = std::ceil(lo / step - 1e-9), k1 = std::floor(hi / step + 1e-9);
      const double n = k1 - k0 + 1;
      const double score = (n >= 4 && n <= 6 ? 0 : 100) + std::abs(n - 5) + (m == 2.5 ? 0.5 : 0);
      if (score < best_score) {
        best_score = score;
        best.step = step;
        best.values.clear();
        for (double k = k0; k <= k1; ++k) best.values.push_back(std::abs(k) < 0.5 ? 0.0 : k * step);
      }
    }
  return best;
}

// Tick label with just enough decimals for the step.
std::string tick_label(double v, double step) {
  const double mag = std::max(std::abs(v), step);
  if (mag >= 1e5 || mag < 1e-3) return compact_g(v, 3);
  int decimals = 0;
  while (decimals < 8) {
    const double s = step * std::pow(10.0, decimals);
    if (std::abs(s - std::round(s)) < 1e-6 * std::max(1.0, s)) break;
    ++decimals;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v == 0 ? 0.0 : v);
  return buf;
}

// About 3 significant digits, in plain notation where that stays short (colorbar limits).
std::string value_label(double v) {
  const double mag = std::abs(v);
  if (mag == 0) return "0";
  if (mag >= 1e5 || mag < 1e-3) return compact_g(v, 3);
  const int decimals = std::max(0, 2 - int(std::floor(std::log10(mag))));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

// ---------------------------------------------------------------- output
void write_png_atomic(const std::string& path, const Canvas& canvas) {
  const std::string tmp = path + ".tmp";
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = png_uint_32(canvas.width());
  image.height = png_uint_32(canvas.height());
  image.format = PNG_FORMAT_RGB;
  if (!png_image_write_to_file(&image, tmp.c_str(), 0, canvas.data(), 0, nullptr)) {
    const std::string msg = image.message;
    png_image_free(&image);
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw std::runtime_error("png_plot: cannot write '" + path + "': " + msg);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw std::runtime_error("png_plot: cannot rename '" + tmp + "' to '" + path + "': " + ec.message());
  }
}

// Layout constants shared by both plot kinds (pixels).
constexpr int kScale = 2;       // axis/tick label text scale (10x14 glyphs)
constexpr int kTitleScale = 3;  // title text scale
constexpr int kMargin = 14;     // outer margin
constexpr int kTick = 6;        // tick length
constexpr int kGap = 6;         // tick-to-label gap
constexpr int kLabelGap = 12;   // tick labels to axis label
constexpr int kCbarGap = 24;    // image to colour bar
constexpr int kCbarW = 22;      // colour bar width

// Maps v in [a, b] linearly onto pixel [p0, p0 + len]; a degenerate range maps to the middle.
double to_pixel(double v, double a, double b, int p0, int len) {
  return b == a ? p0 + 0.5 * len : p0 + (v - a) / (b - a) * len;
}

}  // namespace

namespace {

// One image panel measured for drawing: its displayed size, colour range, tick labels and margins (pixels).
struct PanelLayout {
  int W = 0, H = 0;  // the image's displayed size
  double vmin = 0, vmax = 1;
  bool symmetric = false;
  Ticks xt, yt;
  std::vector<std::string> xl, yl;
  std::vector<std::pair<double, std::string>> cbar;
  int cbar_lab_w = 0, title_scale = kTitleScale, title_w = 0;
  int left = 0, top = 0, bottom = 0, right = 0, width = 0, height = 0;
};

void check_panel(const std::string& path, std::span<const float> data, int rows, int cols) {
  if (rows <= 0 || cols <= 0 || data.size() != std::size_t(rows) * std::size_t(cols))
    throw std::runtime_error("png_plot: '" + path + "': data has " + std::to_string(data.size()) +
                             " values, expected rows*cols = " + std::to_string(rows) + "*" + std::to_string(cols));
}

// The colour range: the fixed one when given; symmetric maps clip |value| at a percentile; sequential: min..max.
void colour_range(std::span<const float> data, const ImagePlot& plot, PanelLayout& l) {
  l.symmetric = plot.colormap != Colormap::viridis;
  if (std::isfinite(plot.value_min) && std::isfinite(plot.value_max) && plot.value_max > plot.value_min) {
    l.vmin = plot.value_min, l.vmax = plot.value_max;
    return;
  }
  std::vector<float> finite;
  finite.reserve(data.size());
  for (float v : data)
    if (std::isfinite(v)) finite.push_back(l.symmetric ? std::abs(v) : v);
  if (!finite.empty() && l.symmetric) {
    const double p = std::clamp(plot.clip_percentile, 0.0, 100.0) / 100.0;
    const auto k = std::size_t(std::lround(p * double(finite.size() - 1)));
    std::nth_element(finite.begin(), finite.begin() + std::ptrdiff_t(k), finite.end());
    double clip = finite[k];
    if (!(clip > 0)) clip = *std::max_element(finite.begin(), finite.end());
    if (!(clip > 0)) clip = 1;
    l.vmin = -clip, l.vmax = clip;
  } else if (!finite.empty()) {
    const auto [mn, mx] = std::minmax_element(finite.begin(), finite.end());
    l.vmin = *mn, l.vmax = *mx;
    if (!(l.vmax > l.vmin)) l.vmin -= 0.5, l.vmax += 0.5;
  }
}

PanelLayout layout_panel(std::span<const float> data, int rows, int cols, const ImagePlot& plot, int title_scale) {
  PanelLayout l;
  // Displayed size: with an aspect (the vertical spacing over the horizontal one), an image true to it whose longer
  // side is min_pixels; else scaled up so the longer side reaches min_pixels, very elongated arrays (gathers with
  // many more samples than traces) stretched to at most 2:1.
  if (plot.aspect > 0) {
    const double h = rows * plot.aspect, w = cols;
    const double f = plot.min_pixels / std::max(h, w);
    l.W = std::max(1, int(std::lround(w * f))), l.H = std::max(1, int(std::lround(h * f)));
  } else {
    const double f = std::max(1.0, double(plot.min_pixels) / std::max(rows, cols));
    l.W = int(std::lround(cols * f)), l.H = int(std::lround(rows * f));
    if (2 * l.W < l.H) l.W = (l.H + 1) / 2;
    if (2 * l.H < l.W) l.H = (l.W + 1) / 2;
  }
  if (const int longer = std::max(l.W, l.H); plot.max_pixels > 0 && longer > plot.max_pixels) {
    const double f = double(plot.max_pixels) / longer;
    l.W = std::max(1, int(std::lround(l.W * f))), l.H = std::max(1, int(std::lround(l.H * f)));
  }
  colour_range(data, plot, l);

  l.xt = nice_ticks(plot.x_min, plot.x_max), l.yt = nice_ticks(plot.y_min, plot.y_max);
  int ylab_w = 0, xlab_first_w = 0, xlab_last_w = 0;
  for (double v : l.xt.values) l.xl.push_back(tick_label(v, l.xt.step));
  for (double v : l.yt.values) {
    l.yl.push_back(tick_label(v, l.yt.step));
    ylab_w = std::max(ylab_w, text_w(l.yl.back(), kScale));
  }
  if (!l.xl.empty()) xlab_first_w = text_w(l.xl.front(), kScale), xlab_last_w = text_w(l.xl.back(), kScale);
  l.cbar = {{l.vmax, value_label(l.vmax)}, {l.vmin, value_label(l.vmin)}};
  if (l.symmetric && l.vmin < 0 && l.vmax > 0) l.cbar.emplace_back(0.0, "0");
  for (const auto& [v, s] : l.cbar) l.cbar_lab_w = std::max(l.cbar_lab_w, text_w(s, kScale));

  const int th = text_h(kScale);
  l.title_scale = title_scale;
  l.title_w = text_w(plot.title, title_scale);
  l.left = std::max(kMargin + (plot.y_label.empty() ? 0 : th + kLabelGap) + ylab_w + kGap + kTick + 1,
                    xlab_first_w / 2 + kMargin);
  l.top = kMargin + (plot.title.empty() ? 0 : text_h(title_scale) + 16) + th / 2;
  l.bottom = 1 + kTick + kGap + th + (plot.x_label.empty() ? 0 : kLabelGap + th) + kMargin;
  l.right = std::max(1 + kCbarGap + kCbarW + 1 + kTick / 2 + kGap + l.cbar_lab_w +
                         (plot.colorbar_label.empty() ? 0 : kLabelGap + th) + kMargin,
                     xlab_last_w / 2 + kMargin);
  l.width = std::max(l.left + l.W + l.right, l.title_w + 2 * kMargin), l.height = l.top + l.H + l.bottom;
  return l;
}

// Draws a laid-out panel with its top-left corner at (ox, oy).
void draw_panel(Canvas& cv, int ox, int oy, const PanelLayout& l, std::span<const float> data, int rows, int cols,
                const ImagePlot& plot) {
  const int th = text_h(kScale);
  const int ix = ox + l.left, iy = oy + l.top, W = l.W, H = l.H;
  const double vmin = l.vmin, vmax = l.vmax;

  // Image pixels: bilinear interpolation of the data, nearest sample where a neighbour is not finite. A gather drawn
  // with fewer pixel rows (columns) than it has samples (traces) shows in each pixel the sample of largest magnitude
  // of the rows (columns) the pixel covers (ImagePlot::max_pixels).
  auto at = [&](int r, int c) { return data[std::size_t(r) * std::size_t(cols) + std::size_t(c)]; };
  const bool peaks = plot.colormap == Colormap::gray_seismic;
  const bool bin_rows = peaks && rows > H, bin_cols = peaks && cols > W;
  const auto bilinear = [&](double sy, double sx) {
    const int r0 = int(sy), r1 = std::min(r0 + 1, rows - 1), c0 = int(sx), c1 = std::min(c0 + 1, cols - 1);
    const double fy = sy - r0, fx = sx - c0;
    const float a = at(r0, c0), b = at(r0, c1), c = at(r1, c0), d = at(r1, c1);
    if (std::isfinite(a) && std::isfinite(b) && std::isfinite(c) && std::isfinite(d))
      return (1 - fy) * ((1 - fx) * a + fx * b) + fy * ((1 - fx) * c + fx * d);
    return double(at(int(std::lround(sy)), int(std::lround(sx))));
  };
  for (int py = 0; py < H; ++py) {
    const double sy = std::clamp((py + 0.5) * rows / H - 0.5, 0.0, double(rows - 1));
    const int ry0 = int(std::int64_t(py) * rows / H), ry1 = std::max(ry0 + 1, int(std::int64_t(py + 1) * rows / H));
    for (int px = 0; px < W; ++px) {
      const double sx = std::clamp((px + 0.5) * cols / W - 0.5, 0.0, double(cols - 1));
      double v;
      if (bin_rows || bin_cols) {  // the bin's sample of largest magnitude (a non-finite one wins: it is shown)
        const int cx0 = bin_cols ? int(std::int64_t(px) * cols / W) : int(std::lround(sx));
        const int cx1 = bin_cols ? std::max(cx0 + 1, int(std::int64_t(px + 1) * cols / W)) : cx0 + 1;
        const int r0 = bin_rows ? ry0 : int(std::lround(sy)), r1 = bin_rows ? ry1 : r0 + 1;
        v = 0;
        for (int r = r0; r < r1 && std::isfinite(v); ++r)
          for (int cc = cx0; cc < cx1; ++cc) {
            const double x = at(r, cc);
            if (!std::isfinite(x) || std::abs(x) > std::abs(v)) v = x;
          }
      } else {
        v = bilinear(sy, sx);
      }
      cv.set(ix + px, iy + py, std::isfinite(v) ? colormap_at(plot.colormap, (v - vmin) / (vmax - vmin)) : kMagenta);
    }
  }
  cv.frame(ix, iy, ix + W, iy + H, kBlack);

  // Axes: ticks with labels on the bottom (x) and left (y) edges.
  for (std::size_t i = 0; i < l.xt.values.size(); ++i) {
    const int x = std::clamp(int(std::lround(to_pixel(l.xt.values[i], plot.x_min, plot.x_max, ix, W))), ix - 1, ix + W);
    cv.fill(x, iy + H + 1, x + 1, iy + H + 1 + kTick, kBlack);
    cv.text(x - text_w(l.xl[i], kScale) / 2, iy + H + 1 + kTick + kGap, l.xl[i], kScale, kText);
  }
  for (std::size_t i = 0; i < l.yt.values.size(); ++i) {
    const int y = std::clamp(int(std::lround(to_pixel(l.yt.values[i], plot.y_min, plot.y_max, iy, H))), iy - 1, iy + H);
    cv.fill(ix - 1 - kTick, y, ix - 1, y + 1, kBlack);
    cv.text(ix - 1 - kTick - kGap - text_w(l.yl[i], kScale), y - th / 2, l.yl[i], kScale, kText);
  }
  if (!plot.x_label.empty())
    cv.text(ix + (W - text_w(plot.x_label, kScale)) / 2, iy + H + 1 + kTick + kGap + th + kLabelGap, plot.x_label,
            kScale, kText);
  if (!plot.y_label.empty())
    cv.text(ox + kMargin, iy + (H - text_w(plot.y_label, kScale)) / 2, plot.y_label, kScale, kText, true);
  if (!plot.title.empty())
    cv.text(std::clamp(ix + (W - l.title_w) / 2, ox + kMargin, ox + l.width - kMargin - l.title_w), oy + kMargin,
            plot.title, l.title_scale, kText);

  // Colorbar: vmax at the top, vmin at the bottom (and 0 for symmetric maps).
  const int cx = ix + W + 1 + kCbarGap;
  for (int py = 0; py < H; ++py)
    cv.fill(cx, iy + py, cx + kCbarW, iy + py + 1, colormap_at(plot.colormap, 1.0 - (py + 0.5) / H));
  cv.frame(cx, iy, cx + kCbarW, iy + H, kBlack);
  for (const auto& [v, s] : l.cbar) {
    const int y = std::clamp(int(std::lround(to_pixel(v, vmax, vmin, iy, H))), iy - 1, iy + H);
    cv.fill(cx + kCbarW + 1, y, cx + kCbarW + 1 + kTick / 2, y + 1, kBlack);
    cv.text(cx + kCbarW + 1 + kTick / 2 + kGap, y - th / 2, s, kScale, kText);
  }
  if (!plot.colorbar_label.empty())
    cv.text(cx + kCbarW + 1 + kTick / 2 + kGap + l.cbar_lab_w + kLabelGap,
            iy + (H - text_w(plot.colorbar_label, kScale)) / 2, plot.colorbar_label, kScale, kText, true);
}

}  // namespace

void write_image_png(const std::string& path, std::span<const float> data, int rows, int cols, const ImagePlot& plot) {
  check_panel(path, data, rows, cols);
  const PanelLayout l = layout_panel(data, rows, cols, plot, kTitleScale);
  Canvas cv(l.width, l.height);
  draw_panel(cv, 0, 0, l, data, rows, cols, plot);
  write_png_atomic(path, cv);
}

void write_image_panels_png(const std::string& path, const std::vector<ImagePanel>& panels, const std::string& title) {
  if (panels.empty()) throw std::runtime_error("png_plot: '" + path + "': no panels");
  std::vector<PanelLayout> layouts;
  int width = 0, height = 0;
  for (const ImagePanel& p : panels) {
    check_panel(path, p.data, p.rows, p.cols);
    layouts.push_back(layout_panel(p.data, p.rows, p.cols, p.plot, kScale));
    width += layouts.back().width, height = std::max(height, layouts.back().height);
  }
  const int title_h = title.empty() ? 0 : kMargin + text_h(kTitleScale);
  width = std::max(width, text_w(title, kTitleScale) + 2 * kMargin);
  Canvas cv(width, title_h + height);
  if (!title.empty()) cv.text((width - text_w(title, kTitleScale)) / 2, kMargin, title, kTitleScale, kText);
  int ox = 0;
  for (std::size_t k = 0; k < panels.size(); ++k) {
    draw_panel(cv, ox, title_h, layouts[k], panels[k].data, panels[k].rows, panels[k].cols, panels[k].plot);
    ox += layouts[k].width;
  }
  write_png_atomic(path, cv);
}

void write_line_png(const std::string& path, std::span<const double> x, const std::vector<std::vector<double>>& series,
                    const std::vector<std::string>& names, const LinePlot& plot) {
  if (x.empty()) throw std::runtime_error("png_plot: '" + path + "': no x values");
  for (std::size_t s = 0; s < series.size(); ++s)
    if (series[s].size() != x.size())
      throw std::runtime_error("png_plot: '" + path + "': series " + std::to_string(s) + " has " +
                               std::to_string(series[s].size()) + " points, x has " + std::to_string(x.size()));
  if (!names.empty() && names.size() != series.size())
    throw std::runtime_error("png_plot: '" + path + "': " + std::to_string(names.size()) + " names for " +
                             std::to_string(series.size()) + " series");

  constexpr Rgb kPalette[] = {{31, 119, 180}, {255, 127, 14},  {44, 160, 44},   {214, 39, 40},  {148, 103, 189},
                              {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207}};
  const bool logy = plot.log_y;
  auto usable = [logy](double v) { return std::isfinite(v) && (!logy || v > 0); };
  auto ty = [logy](double v) { return logy ? std::log10(v) : v; };  // y in axis coordinates

  // Ranges: x exactly spans the data; y gets 5% padding (in log10 units for log axes).
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y0 = x0, y1 = -x0;
  for (double v : x)
    if (std::isfinite(v)) x0 = std::min(x0, v), x1 = std::max(x1, v);
  for (const auto& s : series)
    for (std::size_t i = 0; i < s.size(); ++i)
      if (usable(s[i]) && std::isfinite(x[i])) y0 = std::min(y0, ty(s[i])), y1 = std::max(y1, ty(s[i]));
  if (!(x1 >= x0)) x0 = 0, x1 = 1;
  if (x1 == x0) x0 -= 0.5, x1 += 0.5;
  if (!(y1 >= y0)) y0 = 0, y1 = 1;
  if (y1 == y0) {
    const double d = logy ? 0.5 : std::max(1e-12, 0.1 * std::abs(y0));
    y0 -= d, y1 += d;
  } else {
    const double pad = 0.05 * (y1 - y0);
    y0 -= pad, y1 += pad;
  }

  // Ticks (positions in axis coordinates) and labels.
  Ticks xt = nice_ticks(x0, x1);
  if (plot.integer_x) {  // whole numbers only (iterations), labelled without decimals
    std::erase_if(xt.values, [](double v) { return std::abs(v - std::round(v)) > 1e-9; });
    xt.step = std::max(1.0, std::round(xt.step));
  }
  std::vector<std::pair<double, std::string>> yticks;
  if (logy && std::floor(y1) - std::ceil(y0) >= 1) {
    const double n = std::floor(y1) - std::ceil(y0) + 1;
    const double every = std::ceil(n / 6);
    for (double k = std::ceil(y0); k <= y1; k += every) yticks.emplace_back(k, compact_g(std::pow(10.0, k), 3));
  } else {
    const Ticks t = logy ? nice_ticks(std::pow(10.0, y0), std::pow(10.0, y1)) : nice_ticks(y0, y1);
    for (double v : t.values)
      if (usable(v)) yticks.emplace_back(ty(v), logy ? compact_g(v, 3) : tick_label(v, t.step));
  }

  const int th = text_h(kScale);
  int ylab_w = 0;
  for (const auto& [v, s] : yticks) ylab_w = std::max(ylab_w, text_w(s, kScale));
  const int width = 900, height = 600;
  const int left = kMargin + (plot.y_label.empty() ? 0 : th + kLabelGap) + ylab_w + kGap + kTick + 1;
  const int top = kMargin + (plot.title.empty() ? 0 : text_h(kTitleScale) + 16) + th / 2;
  const int bottom = 1 + kTick + kGap + th + (plot.x_label.empty() ? 0 : kLabelGap + th) + kMargin;
  const int right = 40;
  const int ix = left, iy = top, W = width - left - right, H = height - top - bottom;
  Canvas cv(width, height);
  auto px = [&](double v) { return to_pixel(v, x0, x1, ix, W); };
  auto py = [&](double v) { return to_pixel(v, y1, y0, iy, H); };  // larger values at the top

  for (std::size_t i = 0; i < xt.values.size(); ++i) {
    const int X = int(std::lround(px(xt.values[i])));
    cv.fill(X, iy, X + 1, iy + H, kGrid);
    cv.fill(X, iy + H + 1, X + 1, iy + H + 1 + kTick, kBlack);
    const std::string s = tick_label(xt.values[i], xt.step);
    cv.text(X - text_w(s, kScale) / 2, iy + H + 1 + kTick + kGap, s, kScale, kText);
  }
  for (const auto& [v, s] : yticks) {
    const int Y = int(std::lround(py(v)));
    cv.fill(ix, Y, ix + W, Y + 1, kGrid);
    cv.fill(ix - 1 - kTick, Y, ix - 1, Y + 1, kBlack);
    cv.text(ix - 1 - kTick - kGap - text_w(s, kScale), Y - th / 2, s, kScale, kText);
  }

  for (std::size_t s = 0; s < series.size(); ++s) {
    const Rgb c = kPalette[s % std::size(kPalette)];
    bool have_prev = false;
    double pxp = 0, pyp = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (!usable(series[s][i]) || !std::isfinite(x[i])) {
        have_prev = false;
        continue;
      }
      const double X = px(x[i]), Y = py(ty(series[s][i]));
      if (have_prev)
        cv.line(pxp, pyp, X, Y, c, 2, ix, iy, ix + W - 1, iy + H - 1);
      else
        cv.line(X, Y, X, Y, c, 2, ix, iy, ix + W - 1, iy + H - 1);  // isolated points stay visible
      pxp = X, pyp = Y, have_prev = true;
    }
  }
  cv.frame(ix, iy, ix + W, iy + H, kBlack);

  // Legend in the top-right corner of the plot area.
  int name_w = 0;
  for (const auto& n : names) name_w = std::max(name_w, text_w(n, kScale));
  if (name_w > 0) {
    const int row_h = th + 8, swatch = 28, lw = 10 + swatch + 8 + name_w + 10, lh = 8 + row_h * int(names.size());
    const int lx = ix + W - lw - 10, ly = iy + 10;
    cv.fill(lx, ly, lx + lw, ly + lh, kWhite);
    cv.frame(lx, ly, lx + lw, ly + lh, {150, 150, 150});
    for (std::size_t s = 0; s < names.size(); ++s) {
      const int yc = ly + 4 + row_h * int(s) + row_h / 2;
      cv.fill(lx + 10, yc - 1, lx + 10 + swatch, yc + 1, kPalette[s % std::size(kPalette)]);
      cv.text(lx + 10 + swatch + 8, yc - th / 2, names[s], kScale, kText);
    }
  }

  if (!plot.x_label.empty())
    cv.text(ix + (W - text_w(plot.x_label, kScale)) / 2, iy + H + 1 + kTick + kGap + th + kLabelGap, plot.x_label,
            kScale, kText);
  if (!plot.y_label.empty())
    cv.text(kMargin, iy + (H - text_w(plot.y_label, kScale)) / 2, plot.y_label, kScale, kText, true);
  if (!plot.title.empty()) {
    const int tw = text_w(plot.title, kTitleScale);
    cv.text(std::max(kMargin, ix + (W - tw) / 2), kMargin, plot.title, kTitleScale, kText);
  }
  write_png_atomic(path, cv);
}

}  // namespace specwave::io
