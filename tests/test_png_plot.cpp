#include "io/png_plot.hpp"

#include <doctest/doctest.h>
#include <png.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using specwave::io::Colormap;

struct Rgb8 {
  int r, g, b;
};

struct Decoded {
  int w = 0, h = 0;
  std::vector<unsigned char> px;
  Rgb8 at(int x, int y) const {
    const std::size_t i = (std::size_t(y) * std::size_t(w) + std::size_t(x)) * 3;
    return {px[i], px[i + 1], px[i + 2]};
  }
};

Decoded read_png(const std::string& path) {
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  REQUIRE(png_image_begin_read_from_file(&img, path.c_str()) != 0);
  CHECK(img.format == PNG_FORMAT_RGB);  // written as 8-bit RGB, no alpha
  img.format = PNG_FORMAT_RGB;
  Decoded d;
  d.w = int(img.width);
  d.h = int(img.height);
  d.px.resize(PNG_IMAGE_SIZE(img));
  REQUIRE(png_image_finish_read(&img, nullptr, d.px.data(), 0, nullptr) != 0);
  return d;
}

fs::path scratch_dir() {
  const fs::path dir = fs::temp_directory_path() / ("specwave_test_png_plot_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

// 30 x 60 array: left half +1, right half -1, with a NaN in cell (0, 0) that marks where the image
// sits on the canvas (magenta is used nowhere else).
std::vector<float> halves(int rows, int cols) {
  std::vector<float> d(std::size_t(rows) * cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) d[std::size_t(r) * cols + c] = c < cols / 2 ? 1.0f : -1.0f;
  d[0] = std::numeric_limits<float>::quiet_NaN();
  return d;
}

struct Box {
  int x0 = 1 << 30, y0 = 1 << 30, x1 = -1, y1 = -1;  // inclusive
};

Box find_color(const Decoded& img, Rgb8 c) {
  Box b;
  for (int y = 0; y < img.h; ++y)
    for (int x = 0; x < img.w; ++x) {
      const Rgb8 p = img.at(x, y);
      if (p.r == c.r && p.g == c.g && p.b == c.b)
        b.x0 = std::min(b.x0, x), b.y0 = std::min(b.y0, y), b.x1 = std::max(b.x1, x), b.y1 = std::max(b.y1, y);
    }
  return b;
}

}  // namespace

TEST_CASE("write_image_png: size, placement, colormap extremes, NaN, atomic write") {
  const fs::path dir = scratch_dir();
  const int rows = 30, cols = 60;
  const auto data = halves(rows, cols);

  struct Expect {
    Colormap cm;
    Rgb8 pos, neg;
  };
  const Expect cases[] = {
      {Colormap::seismic, {128, 0, 0}, {0, 0, 77}},          // dark red / dark blue extremes
      {Colormap::gray_seismic, {255, 255, 255}, {0, 0, 0}},  // white / black
      {Colormap::viridis, {253, 231, 37}, {68, 1, 84}},      // yellow / purple
  };
  for (const auto& e : cases) {
    CAPTURE(int(e.cm));
    const std::string path = (dir / ("halves_" + std::to_string(int(e.cm)) + ".png")).string();
    specwave::io::ImagePlot plot;
    plot.title = "Test image";
    plot.x_label = "Offset (m)";
    plot.y_label = "Time (s)";
    plot.x_max = 600;
    plot.y_max = 3;
    plot.colorbar_label = "amplitude";
    plot.colormap = e.cm;
    plot.min_pixels = 600;
    specwave::io::write_image_png(path, data, rows, cols, plot);

    CHECK(fs::exists(path));
    CHECK_FALSE(fs::exists(path + ".tmp"));
    const Decoded img = read_png(path);
    // 60 x 30 cells scaled by 10 -> a 600 x 300 image plus margins, axes and colorbar.
    CHECK(img.w > 600);
    CHECK(img.w < 1000);
    CHECK(img.h > 300);
    CHECK(img.h < 500);
    CHECK(img.at(0, 0).r == 255);  // white background
    CHECK(img.at(0, 0).g == 255);
    CHECK(img.at(0, 0).b == 255);

    // The NaN cell is exactly one 10 x 10 magenta block at the image's top-left corner.
    const Box nan = find_color(img, {255, 0, 255});
    REQUIRE(nan.x1 >= 0);
    CHECK(nan.x1 - nan.x0 + 1 == 10);
    CHECK(nan.y1 - nan.y0 + 1 == 10);
    const int ox = nan.x0, oy = nan.y0;
    // Axis frame just outside the image.
    const Rgb8 frame = img.at(ox - 1, oy + 150);
    CHECK(frame.r == 0);
    CHECK(frame.g == 0);
    CHECK(frame.b == 0);
    // Centre of cell (15, 10): +1 -> positive extreme; cell (15, 45): -1 -> negative extreme.
    const Rgb8 pos = img.at(ox + 105, oy + 155), neg = img.at(ox + 455, oy + 155);
    CHECK(pos.r == e.pos.r);
    CHECK(pos.g == e.pos.g);
    CHECK(pos.b == e.pos.b);
    CHECK(neg.r == e.neg.r);
    CHECK(neg.g == e.neg.g);
    CHECK(neg.b == e.neg.b);
  }
  fs::remove_all(dir);
}

TEST_CASE("write_image_png: seismic colours are red for positive, blue for negative, white for zero") {
  const fs::path dir = scratch_dir();
  const std::string path = (dir / "ramp.png").string();
  // 3 rows: +1, 0, -1 (plus a NaN marker at (0, 0)); 3 x 3 cells scaled to 600 x 600.
  std::vector<float> d = {std::numeric_limits<float>::infinity(), 1, 1, 0, 0, 0, -1, -1, -1};
  specwave::io::ImagePlot plot;
  plot.clip_percentile = 100;
  specwave::io::write_image_png(path, d, 3, 3, plot);
  const Decoded img = read_png(path);
  const Box inf = find_color(img, {255, 0, 255});
  REQUIRE(inf.x1 >= 0);
  CHECK(inf.x1 - inf.x0 + 1 == 200);
  const int ox = inf.x0, oy = inf.y0;
  const Rgb8 red = img.at(ox + 300, oy + 50), white = img.at(ox + 300, oy + 300), blue = img.at(ox + 300, oy + 550);
  CHECK(red.r > 100);
  CHECK(red.g < 30);
  CHECK(red.b < 30);
  CHECK(white.r >= 250);  // bilinear: a hair off exact zero
  CHECK(white.g >= 250);
  CHECK(white.b >= 250);
  CHECK(blue.b > 60);
  CHECK(blue.r < 30);
  CHECK(blue.g < 30);
  fs::remove_all(dir);
}

TEST_CASE("write_image_png: errors name the path and leave no temp file") {
  const std::vector<float> d(12, 0.5f);
  specwave::io::ImagePlot plot;
  const std::string bad = "/nonexistent_specwave_dir/sub/out.png";
  CHECK_THROWS_AS(specwave::io::write_image_png(bad, d, 3, 4, plot), std::runtime_error);
  try {
    specwave::io::write_image_png(bad, d, 3, 4, plot);
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find(bad) != std::string::npos);
  }
  CHECK_FALSE(fs::exists(bad + ".tmp"));

  const fs::path dir = scratch_dir();
  const std::string path = (dir / "shape.png").string();
  CHECK_THROWS_AS(specwave::io::write_image_png(path, d, 5, 4, plot), std::runtime_error);  // 12 != 20
  CHECK_THROWS_AS(specwave::io::write_image_png(path, d, 0, 12, plot), std::runtime_error);
  CHECK_FALSE(fs::exists(path));
  fs::remove_all(dir);
}

TEST_CASE("write_image_png: replaces an existing file") {
  const fs::path dir = scratch_dir();
  const std::string path = (dir / "again.png").string();
  specwave::io::ImagePlot plot;
  plot.min_pixels = 100;
  std::vector<float> d(20 * 10, 1.0f);
  specwave::io::write_image_png(path, d, 20, 10, plot);
  const int h1 = read_png(path).h;
  plot.min_pixels = 300;
  specwave::io::write_image_png(path, d, 20, 10, plot);
  CHECK(read_png(path).h > h1);
  CHECK_FALSE(fs::exists(path + ".tmp"));
  fs::remove_all(dir);
}

TEST_CASE("write_line_png: draws series in palette colours, log axis, validates input") {
  const fs::path dir = scratch_dir();
  const std::string path = (dir / "misfit.png").string();
  std::vector<double> x, a, b;
  for (int i = 0; i < 40; ++i) {
    x.push_back(i);
    a.push_back(std::exp(-0.2 * i));
    b.push_back(0.5 * std::exp(-0.1 * i));
  }
  b[10] = std::numeric_limits<double>::quiet_NaN();  // gap in the curve
  specwave::io::LinePlot plot{"Misfit", "iteration", "misfit", true};
  specwave::io::write_line_png(path, x, {a, b}, {"L2", "cross-correlation"}, plot);
  CHECK_FALSE(fs::exists(path + ".tmp"));
  const Decoded img = read_png(path);
  CHECK(img.w == 900);
  CHECK(img.h == 600);
  const Box first = find_color(img, {31, 119, 180}), second = find_color(img, {255, 127, 14});
  CHECK(first.x1 - first.x0 > 400);  // the curves span most of the plot width
  CHECK(second.x1 - second.x0 > 400);
  CHECK(first.y1 - first.y0 > 300);  // 8 decades vs 4: the steeper curve spans more height

  CHECK_THROWS_AS(specwave::io::write_line_png(path, x, {std::vector<double>(3, 1.0)}, {"short"}, plot),
                  std::runtime_error);
  CHECK_THROWS_AS(specwave::io::write_line_png(path, x, {a, b}, {"one name"}, plot), std::runtime_error);
  CHECK_THROWS_AS(specwave::io::write_line_png("/nonexistent_specwave_dir/m.png", x, {a}, {"a"}, plot),
                  std::runtime_error);
  fs::remove_all(dir);
}

TEST_CASE("write_image_png: aspect draws the image true to the grid spacings (equal aspect in metres)") {
  const fs::path dir = scratch_dir();
  const std::string path = (dir / "aspect.png").string();
  // 10 rows x 40 columns with dz = 2 dx: 20 x 40 in metres, drawn 200 x 400 pixels (the longer side 400);
  // without the aspect it would be 100 x 400 stretched to 200 x 400 and each row 20 pixels tall, not 10 * 2.
  std::vector<float> d(10 * 40, 1.0f);
  d[0] = std::numeric_limits<float>::quiet_NaN();
  specwave::io::ImagePlot plot;
  plot.min_pixels = 400;
  plot.aspect = 2.0;
  specwave::io::write_image_png(path, d, 10, 40, plot);
  Box nan = find_color(read_png(path), {255, 0, 255});
  CHECK(nan.x1 - nan.x0 + 1 == 10);  // a cell: 400 / 40 wide
  CHECK(nan.y1 - nan.y0 + 1 == 20);  // and 2 x 10 tall
  // A tall model (40 rows, dz = dx / 2): 20 m tall, 10 m wide, 400 x 200 pixels; not stretched to 2:1.
  std::vector<float> t(40 * 10, 1.0f);
  t[0] = std::numeric_limits<float>::quiet_NaN();
  plot.aspect = 0.5;
  specwave::io::write_image_png(path, t, 40, 10, plot);
  nan = find_color(read_png(path), {255, 0, 255});
  CHECK(nan.x1 - nan.x0 + 1 == 20);
  CHECK(nan.y1 - nan.y0 + 1 == 10);
  fs::remove_all(dir);
}

TEST_CASE("write_image_png: a fixed colour range maps values onto it, not onto the data's own range") {
  const fs::path dir = scratch_dir();
  const std::string path = (dir / "range.png").string();
  // All 0.5 on the range [0, 1]: the middle of viridis (33, 145, 140); on its own range it would be degenerate.
  std::vector<float> d(4 * 4, 0.5f);
  d[0] = std::numeric_limits<float>::quiet_NaN();
  specwave::io::ImagePlot plot;
  plot.colormap = Colormap::viridis;
  plot.min_pixels = 200;
  plot.value_min = 0, plot.value_max = 1;
  specwave::io::write_image_png(path, d, 4, 4, plot);
  const Decoded img = read_png(path);
  const Box nan = find_color(img, {255, 0, 255});
  REQUIRE(nan.x1 >= 0);
  const Rgb8 mid = img.at(nan.x0 + 125, nan.y0 + 125);
  CHECK(mid.r == 33);
  CHECK(mid.g == 145);
  CHECK(mid.b == 140);
  fs::remove_all(dir);
}

TEST_CASE("write_image_panels_png: panels side by side, each with its own axes and colour scale") {
  const fs::path dir = scratch_dir();
  const std::string path = (dir / "panels.png").string();
  // Two 10 x 10 panels of +1 / -1 with a NaN marker each; the second on a symmetric scale of its own.
  std::vector<float> a(100, 1.0f), b(100, -1.0f);
  a[0] = b[0] = std::numeric_limits<float>::quiet_NaN();
  specwave::io::ImagePlot pa, pb;
  pa.colormap = Colormap::viridis, pa.value_min = -1, pa.value_max = 1, pa.min_pixels = 100, pa.title = "left";
  pb.colormap = Colormap::seismic, pb.clip_percentile = 100, pb.min_pixels = 100, pb.title = "right";
  specwave::io::write_image_panels_png(path, {{a, 10, 10, pa}, {b, 10, 10, pb}}, "Two panels");
  const Decoded img = read_png(path);
  const Box nan = find_color(img, {255, 0, 255});
  REQUIRE(nan.x1 >= 0);
  CHECK(nan.y1 - nan.y0 + 1 == 10);  // both markers on one row of panels, 10 pixels tall
  CHECK(nan.x1 - nan.x0 > 100);      // the second marker lies right of the first panel
  const Rgb8 left = img.at(nan.x0 + 50, nan.y0 + 50);
  CHECK(left.r == 253);  // +1 at the top of viridis on [-1, 1]
  CHECK(left.g == 231);
  const Rgb8 right = img.at(nan.x1 - 9 + 50, nan.y0 + 50);
  CHECK(right.r == 0);  // -1: the bottom of the seismic map on its own symmetric scale
  CHECK(right.g == 0);
  CHECK(right.b == 77);
  CHECK_THROWS_AS(specwave::io::write_image_panels_png(path, {}, "none"), std::runtime_error);
  fs::remove_all(dir);
}

TEST_CASE("write_line_png: integer_x puts x ticks on whole numbers only (iterations)") {
  const fs::path dir = scratch_dir();
  // x = 0, 1, 2: the round ticks would be every 0.5; with integer_x only 0, 1, 2 (3 vertical grid lines).
  const std::vector<double> x = {0, 1, 2}, y = {1, 0.5, 0.25};
  const auto grid_lines = [&](bool integer_x) {
    const std::string path = (dir / "ticks.png").string();
    specwave::io::LinePlot plot{"Misfit", "iteration", "misfit", false};
    plot.integer_x = integer_x;
    specwave::io::write_line_png(path, x, {y}, {"misfit"}, plot);
    const Decoded img = read_png(path);
    // The vertical grid lines (1 pixel each) crossing a row: the most common count of grid pixels over the rows
    // of the plot area (a row on a horizontal grid line or the curve is the exception).
    std::map<int, int> rows_with;
    for (int r = img.h / 4; r < 3 * img.h / 4; ++r) {
      int n = 0;
      for (int c = 0; c < img.w; ++c) {
        const Rgb8 p = img.at(c, r);
        n += p.r == 228 && p.g == 228 && p.b == 228;
      }
      ++rows_with[n];
    }
    return std::max_element(rows_with.begin(), rows_with.end(),
                            [](const auto& a, const auto& b) { return a.second < b.second; })
        ->first;
  };
  // The line at the right end lies under the plot's frame: 0, 0.5, 1, 1.5 show, or 0 and 1.
  CHECK(grid_lines(false) == 4);
  CHECK(grid_lines(true) == 2);
  fs::remove_all(dir);
}

TEST_CASE("plot text is antialiased: edge pixels take the glyph's coverage, diagonal steps are joined") {
  const fs::path dir = scratch_dir();
  const std::string path = (dir / "text.png").string();
  // The title band (above the plot frame) holds only the title: with antialiasing its ink has intermediate greys
  // between the text colour (20) and white, not just the two; a slash's diagonal steps get partly covered pixels.
  specwave::io::LinePlot plot{"///  vwxyz  AVWXY", "x", "y", false};
  specwave::io::write_line_png(path, std::vector<double>{0, 1}, {{1.0, 2.0}}, {"a"}, plot);
  const Decoded img = read_png(path);
  int full = 0, partial = 0;
  for (int y = 0; y < 50; ++y)
    for (int x = 0; x < img.w; ++x) {
      const Rgb8 p = img.at(x, y);
      if (p.r == 20 && p.g == 20 && p.b == 20) ++full;
      if (p.r == p.g && p.g == p.b && p.r > 20 && p.r < 255) ++partial;
    }
  CHECK(full > 100);
  CHECK(partial > 50);
  fs::remove_all(dir);
}

TEST_CASE("write_image_png: a long gather is drawn at most max_pixels tall and keeps one-sample arrivals") {
  const fs::path dir = scratch_dir();
  specwave::io::ImagePlot plot;
  plot.colormap = specwave::io::Colormap::gray_seismic;
  plot.value_min = -4, plot.value_max = 4;  // +1 and -1 fall on grays that neither the frame nor the text use
  plot.max_pixels = 600;
  // The colours of +1 and -1: a small image (drawn larger than itself, so interpolated) with those values.
  const std::string small = (dir / "small.png").string();
  std::vector<float> s = {std::numeric_limits<float>::quiet_NaN(), 1, 1, 1, -1, -1, -1, -1, -1};
  specwave::io::write_image_png(small, s, 3, 3, plot);
  const Decoded ref = read_png(small);
  const Box marker = find_color(ref, {255, 0, 255});
  const Rgb8 plus = ref.at(marker.x1 + 150, marker.y0), minus = ref.at(marker.x0, marker.y1 + 350);
  // 30000 samples of 4 traces, zero but for one sample of +1 and one of -1: 50 samples a pixel row.
  const int rows = 30000, cols = 4;
  std::vector<float> g(std::size_t(rows) * cols, 0.0f);
  g[0] = std::numeric_limits<float>::quiet_NaN();  // marks the image's top-left pixel (a bin shows its NaN)
  g[std::size_t(17001) * cols + 1] = 1.0f;
  g[std::size_t(23457) * cols + 2] = -1.0f;
  const std::string path = (dir / "gather.png").string();
  specwave::io::write_image_png(path, g, rows, cols, plot);
  const Decoded img = read_png(path);
  CHECK(img.h < 800);  // 600 image rows and the axes, not 30000
  // Within the image (300 x 600: the gather's 2:1), not its colour bar, which has every gray.
  const Box corner = find_color(img, {255, 0, 255});
  REQUIRE(corner.x1 - corner.x0 + 1 == 75);  // trace 0's quarter of the width, one pixel row
  REQUIRE(corner.y0 == corner.y1);
  const auto find_in_image = [&](Rgb8 c) {
    Box b;
    for (int y = corner.y0; y < corner.y0 + 600; ++y)
      for (int x = corner.x0; x < corner.x0 + 300; ++x)
        if (const Rgb8 q = img.at(x, y); q.r == c.r && q.g == c.g && q.b == c.b)
          b.x0 = std::min(b.x0, x), b.y0 = std::min(b.y0, y), b.x1 = std::max(b.x1, x), b.y1 = std::max(b.y1, y);
    return b;
  };
  const Box p = find_in_image(plus), m = find_in_image(minus);
  CHECK(p.y1 >= 0);  // each arrival is drawn, in one pixel row
  CHECK(m.y1 >= 0);
  CHECK(p.y1 == p.y0);
  CHECK(m.y1 == m.y0);
  CHECK(m.y0 > p.y0);  // in time order
  CHECK(m.x0 > p.x1);  // and in their traces
  fs::remove_all(dir);
}
