#pragma once
#include <limits>
#include <span>
#include <string>
#include <vector>
namespace specwave::io {
enum class Colormap {
  seismic /* blue-white-red, symmetric about 0 */,
  gray_seismic /* black-white, symmetric */,
  viridis /* sequential */
};
struct ImagePlot {
  std::string title;             // drawn at the top with a built-in 5x7 font, antialiased (ASCII 32..126)
  std::string x_label, y_label;  // axis labels (drawn with the same font; y label may be horizontal at top-left)
  double x_min = 0, x_max = 1, y_min = 0,
         y_max = 1;  // axis extents for tick labels (y increases downward, as depth/time)
  Colormap colormap = Colormap::seismic;
  double clip_percentile = 99.0;  // for symmetric maps: clip at this percentile of |value|; sequential maps: min..max
  std::string colorbar_label;
  int min_pixels = 600;  // the image is scaled up (nearest or bilinear) so its longer side is at least this
  // > 0: the image is drawn true to scale, a row `aspect` times as tall as a column is wide (the vertical grid
  // spacing over the horizontal one: equal aspect in metres), its longer side min_pixels. 0: scaled up to
  // min_pixels, and stretched to at most 2:1 (gathers).
  double aspect = 0;
  // The image's longer side at most this many pixels: a longer array (a gather of a long record: tens of thousands of
  // samples) is drawn smaller than itself. Along an axis shrunk so, a gray_seismic image (a gather) shows in each pixel
  // the sample of largest magnitude among those it covers, so that no arrival falls between pixels; other maps
  // interpolate.
  int max_pixels = 2400;
  // A fixed colour range (both finite, max > min): panels compared on one scale. Else from the data.
  double value_min = std::numeric_limits<double>::quiet_NaN(), value_max = std::numeric_limits<double>::quiet_NaN();
};
// data is (rows, cols) in C order: row = vertical axis (downward), col = horizontal axis.
// Writes atomically: to "<path>.tmp", then rename. Throws std::runtime_error naming the path on failure.
void write_image_png(const std::string& path, std::span<const float> data, int rows, int cols, const ImagePlot& plot);
// Several images side by side on one canvas under one title, each with its own axes, title and colour bar
// (inversion: start | final | true on one velocity scale, and the update on its own symmetric scale).
struct ImagePanel {
  std::span<const float> data;
  int rows = 0, cols = 0;
  ImagePlot plot;
};
void write_image_panels_png(const std::string& path, const std::vector<ImagePanel>& panels, const std::string& title);
struct LinePlot {
  std::string title, x_label, y_label;
  bool log_y = false;
  bool integer_x = false;  // x ticks at whole numbers only (iterations)
};
// several series sharing x; draws axes, ticks with numbers, and a legend (misfit curves).
void write_line_png(const std::string& path, std::span<const double> x, const std::vector<std::vector<double>>& series,
                    const std::vector<std::string>& names, const LinePlot& plot);
}  // namespace specwave::io
