// Model files (solver/plan/model.cpp): on the case's grid they are read as they are; on their own grid (shape,
// spacing and origin attributes) they are resampled trilinearly, exactly for linear fields; a model that does not
// cover the grid, or of another shape without its spacing, is refused naming the file. Raw binary files (every
// storage order, byte order and value type) and SEG-Y velocity cubes give the HDF5 file's values.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <vector>

#include "case_builders.hpp"
#include "io/hdf5.hpp"
#include "solver/case/errors.hpp"
#include "solver/plan/model.hpp"

using namespace specwave;
namespace fs = std::filesystem;

namespace {

const fs::path dir = fs::temp_directory_path() / "specwave_test_model_file";

double linear(double z, double y, double x) { return 2000 + 1.5 * z - 0.75 * y + 0.5 * x; }

// A model file of `shape` on its own grid (spacing, origin; none written when empty), values linear(position).
std::string write_model(const std::string& name, std::array<int, 3> shape, std::vector<double> spacing,
                        std::vector<double> origin) {
  fs::create_directories(dir);
  const Vec3 h = spacing.empty() ? Vec3{10, 10, 10} : Vec3{spacing[0], spacing[1], spacing[2]};
  const Vec3 o = origin.empty() ? Vec3{0, 0, 0} : Vec3{origin[0], origin[1], origin[2]};
  std::vector<float> v;
  for (int z = 0; z < shape[0]; ++z)
    for (int y = 0; y < shape[1]; ++y)
      for (int x = 0; x < shape[2]; ++x) v.push_back(float(linear(o[0] + z * h[0], o[1] + y * h[1], o[2] + x * h[2])));
  const std::string path = (dir / (name + ".h5")).string();
  io::h5::AtomicWriter file(path);
  auto d = io::h5::write_dataset<float>(file.id(), "velocity",
                                        {hsize_t(shape[0]), hsize_t(shape[1]), hsize_t(shape[2])}, v.data(), "m/s");
  if (!spacing.empty()) io::h5::write_attribute(d.id(), "spacing", std::span<const double>(spacing));
  if (!origin.empty()) io::h5::write_attribute(d.id(), "origin", std::span<const double>(origin));
  d.close();
  file.commit();
  return path;
}

Case file_case(const std::string& path) {
  Case c = testing::small_case(20, 10, 2000, 8, 4, 15, 0.1);
  c.grid.shape = {20, 12, 16};
  c.grid.origin = {100, 50, 20};
  c.model.kind = ModelSpec::Kind::file;
  c.model.file = path;
  return c;
}

}  // namespace

TEST_CASE("a model file on its own grid is resampled trilinearly: exact for a linear field") {
  // 7 m spacing in z, 13 m in y, 4 m in x, starting before the case's grid and ending after it.
  const std::string path = write_model("own-grid", {40, 20, 60}, {7, 13, 4}, {90, 40, 10});
  const Case c = file_case(path);
  const VelocityModel m = build_velocity_model(c);
  CHECK(m.note.find("resampled trilinearly") != std::string::npos);
  double worst = 0;
  for (int z = 0; z < 20; ++z)
    for (int y = 0; y < 12; ++y)
      for (int x = 0; x < 16; ++x) {
        const Vec3 p = c.grid.position(z, y, x);
        worst = std::max(worst, std::abs(m.at(z, y, x) - linear(p[0], p[1], p[2])) / linear(p[0], p[1], p[2]));
      }
  MESSAGE("largest relative error of the resampled linear field: " << worst);
  CHECK(worst < 2e-7);  // float32 values and weights
}

TEST_CASE("a model file one point thick along an axis is constant along it (a 2-D section for a 3-D grid)") {
  const std::string path = write_model("section", {40, 1, 60}, {7, 10, 4}, {90, 0, 10});
  const Case c = file_case(path);
  const VelocityModel m = build_velocity_model(c);
  for (int y = 0; y < 12; ++y) CHECK(m.at(5, y, 7) == m.at(5, 0, 7));
  const Vec3 p = c.grid.position(5, 0, 7);
  CHECK(m.at(5, 0, 7) == doctest::Approx(linear(p[0], 0, p[2])).epsilon(1e-6));
}

TEST_CASE("a model file on the case's grid is read as it is; one that does not cover the grid is refused") {
  // The case's own grid (same shape, spacing, origin): no resampling, the file's values.
  const Case same = file_case(write_model("same", {20, 12, 16}, {10, 10, 10}, {100, 50, 20}));
  CHECK(build_velocity_model(same).note.empty());
  // Too short along x: [10, 10 + 30 * 4] = [10, 130] m, the grid reaches 20 + 15 * 10 = 170 m.
  const Case short_x = file_case(write_model("short", {40, 20, 31}, {7, 13, 4}, {90, 40, 10}));
  CHECK_THROWS_WITH_AS(build_velocity_model(short_x),
                       doctest::Contains("short.h5: dataset '/velocity' covers x in [10, 130] m"), Error);
  // Another shape without a spacing attribute: nothing to resample from.
  const Case no_spacing = file_case(write_model("no-spacing", {40, 20, 60}, {}, {}));
  CHECK_THROWS_WITH_AS(build_velocity_model(no_spacing),
                       doctest::Contains("give the model's grid as dataset attributes"), Error);
  // The case's shape with another origin and no spacing: the origin is what differs, and the message says so.
  const Case moved = file_case(write_model("moved", {20, 12, 16}, {}, {105, 50, 20}));
  CHECK_THROWS_WITH_AS(build_velocity_model(moved),
                       doctest::Contains("has the case's shape (20, 12, 16) but its origin [105, 50, 20] m is not "
                                         "grid.origin [100, 50, 20] m"),
                       Error);
  // A spacing attribute below 1e-9 m (a misread value) is refused with the value found.
  const Case tiny = file_case(write_model("tiny", {40, 20, 60}, {7, 1e-320, 4}, {90, 40, 10}));
  CHECK_THROWS_WITH_AS(build_velocity_model(tiny), doctest::Contains("found [7, 1e-320, 4]"), Error);
}

namespace {

// The linear field's values on a file grid, (nz, ny, nx) C order.
std::vector<float> linear_values(std::array<int, 3> shape, Vec3 h, Vec3 o) {
  std::vector<float> v;
  for (int z = 0; z < shape[0]; ++z)
    for (int y = 0; y < shape[1]; ++y)
      for (int x = 0; x < shape[2]; ++x) v.push_back(float(linear(o[0] + z * h[0], o[1] + y * h[1], o[2] + x * h[2])));
  return v;
}

// Raw binary of `v` ((nz, ny, nx) C order) stored with the axes `order` from slowest to fastest (0 z, 1 y, 2 x).
std::string write_raw(const std::string& name, const std::vector<float>& v, std::array<int, 3> shape,
                      std::array<int, 3> order, bool float64, bool big_endian) {
  fs::create_directories(dir);
  const std::string path = (dir / (name + ".bin")).string();
  std::ofstream out(path, std::ios::binary);
  std::array<int, 3> i{};  // (z, y, x) of the value written next, the fastest axis counting first
  for (std::size_t k = 0; k < v.size(); ++k) {
    const double value = v[(std::size_t(i[0]) * shape[1] + i[1]) * shape[2] + i[2]];
    unsigned char b[8];
    const std::size_t n = float64 ? 8 : 4;
    if (float64)
      std::memcpy(b, &value, 8);
    else {
      const float f = float(value);
      std::memcpy(b, &f, 4);
    }
    if (big_endian) std::reverse(b, b + n);  // this machine is little-endian (x86-64)
    out.write(reinterpret_cast<const char*>(b), std::streamsize(n));
    for (int a = 2; a >= 0; --a) {  // next index: the fastest axis first
      const int axis = order[std::size_t(a)];
      if (++i[std::size_t(axis)] < shape[std::size_t(axis)]) break;
      i[std::size_t(axis)] = 0;
    }
  }
  return path;
}

template <class T>
void put_be(std::vector<unsigned char>& h, std::size_t position, T value) {
  unsigned char b[sizeof(T)];
  std::memcpy(b, &value, sizeof(T));
  for (std::size_t k = 0; k < sizeof(T); ++k) h[position - 1 + k] = b[sizeof(T) - 1 - k];
}

// A SEG-Y velocity cube (big-endian, IEEE floats) of `v` ((nz, ny, nx), spacing h and origin o in y and x), one
// trace per (y, x) at its CDP coordinates in centimetres (scalar -100), traces in crossline-major order (x slowest)
// as many files have them. `edit` may change each trace header (index y, x).
std::string write_segy_cube(const std::string& name, const std::vector<float>& v, std::array<int, 3> shape, Vec3 h,
                            Vec3 o, const std::function<void(std::vector<unsigned char>&, int, int)>& edit = {}) {
  fs::create_directories(dir);
  const std::string path = (dir / (name + ".sgy")).string();
  std::ofstream out(path, std::ios::binary);
  std::vector<unsigned char> head(3600, 0);
  put_be<std::uint16_t>(head, 3217, 2000);  // 2 ms: a time, which a depth cube's reader ignores
  put_be<std::uint16_t>(head, 3221, std::uint16_t(shape[0]));
  put_be<std::int16_t>(head, 3225, 5);
  out.write(reinterpret_cast<const char*>(head.data()), 3600);
  for (int x = 0; x < shape[2]; ++x)
    for (int y = 0; y < shape[1]; ++y) {
      std::vector<unsigned char> th(240, 0);
      put_be<std::int16_t>(th, 71, -100);
      put_be<std::int32_t>(th, 181, std::int32_t(std::lround((o[2] + x * h[2]) * 100)));
      put_be<std::int32_t>(th, 185, std::int32_t(std::lround((o[1] + y * h[1]) * 100)));
      put_be<std::uint16_t>(th, 115, std::uint16_t(shape[0]));
      if (edit) edit(th, y, x);
      out.write(reinterpret_cast<const char*>(th.data()), 240);
      for (int z = 0; z < shape[0]; ++z) {
        std::vector<unsigned char> s(4);
        put_be<float>(s, 1, v[(std::size_t(z) * shape[1] + y) * shape[2] + x]);
        out.write(reinterpret_cast<const char*>(s.data()), 4);
      }
    }
  return path;
}

// Every value of two models equal (the same float32 inputs go through the same resampling).
void check_same_model(const VelocityModel& a, const VelocityModel& b) {
  REQUIRE(a.velocity.size() == b.velocity.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < a.velocity.size(); ++i) differ += a.velocity[i] != b.velocity[i];
  CHECK(differ == 0);
}

}  // namespace

TEST_CASE("model.index: one model of a 4-D dataset (an iteration of inversion.h5), on the grid or resampled") {
  // Three models, (3, nz, ny, nx): model k is linear() + 100 k, on the case's grid and on a grid of its own.
  const auto write4 = [](const std::string& name, std::array<int, 3> shape, Vec3 h, Vec3 o, bool attributes) {
    std::vector<float> v;
    for (int k = 0; k < 3; ++k)
      for (int z = 0; z < shape[0]; ++z)
        for (int y = 0; y < shape[1]; ++y)
          for (int x = 0; x < shape[2]; ++x)
            v.push_back(float(linear(o[0] + z * h[0], o[1] + y * h[1], o[2] + x * h[2]) + 100 * k));
    const std::string path = (dir / (name + ".h5")).string();
    fs::create_directories(dir);
    io::h5::AtomicWriter file(path);
    auto d = io::h5::write_dataset<float>(
        file.id(), "velocity", {3, hsize_t(shape[0]), hsize_t(shape[1]), hsize_t(shape[2])}, v.data(), "m/s");
    if (attributes) {
      io::h5::write_attribute(d.id(), "spacing", std::span<const double>(h.data(), 3));
      io::h5::write_attribute(d.id(), "origin", std::span<const double>(o.data(), 3));
    }
    d.close();
    file.commit();
    return path;
  };
  for (const bool own_grid : {false, true}) {
    CAPTURE(own_grid);
    const std::string path = own_grid ? write4("iterations-own", {40, 20, 60}, {7, 13, 4}, {90, 40, 10}, true)
                                      : write4("iterations", {20, 12, 16}, {10, 10, 10}, {100, 50, 20}, true);
    Case c = file_case(path);
    c.model.index = 2;
    const VelocityModel m = build_velocity_model(c);
    double worst = 0;
    for (int z = 0; z < 20; ++z)
      for (int y = 0; y < 12; ++y)
        for (int x = 0; x < 16; ++x) {
          const Vec3 p = c.grid.position(z, y, x);
          const double want = linear(p[0], p[1], p[2]) + 200;
          worst = std::max(worst, std::abs(m.at(z, y, x) - want) / want);
        }
    CHECK(worst < 2e-7);
    c.model.index = 3;
    CHECK_THROWS_WITH_AS(build_velocity_model(c), doctest::Contains("model.index = 3 is beyond its 3 models (0 to 2)"),
                         Error);
    c.model.index.reset();
    CHECK_THROWS_WITH_AS(build_velocity_model(c), doctest::Contains("is 4-D (3 models); give model.index"), Error);
  }
  Case flat = file_case(write_model("flat", {20, 12, 16}, {10, 10, 10}, {100, 50, 20}));
  flat.model.index = 0;
  CHECK_THROWS_WITH_AS(build_velocity_model(flat), doctest::Contains("picks a model of a 4-D dataset"), Error);
}

TEST_CASE("raw binary models: every storage order, both byte orders and value types give the HDF5 model's values") {
  const std::array<int, 3> shape = {40, 20, 60};
  const Vec3 h = {7, 13, 4}, o = {90, 40, 10};
  const VelocityModel reference =
      build_velocity_model(file_case(write_model("raw-ref", shape, {7, 13, 4}, {90, 40, 10})));
  const std::vector<float> v = linear_values(shape, h, o);
  const std::vector<std::pair<std::string, std::array<int, 3>>> orders = {{"zyx", {0, 1, 2}}, {"zxy", {0, 2, 1}},
                                                                          {"yzx", {1, 0, 2}}, {"yxz", {1, 2, 0}},
                                                                          {"xzy", {2, 0, 1}}, {"xyz", {2, 1, 0}}};
  for (const auto& named_order : orders)  // not a structured binding: clang 14 cannot capture one in CAPTURE
    for (const bool float64 : {false, true})
      for (const bool big : {false, true}) {
        const std::string& name = named_order.first;
        const std::array<int, 3>& order = named_order.second;
        CAPTURE(name);
        CAPTURE(float64);
        CAPTURE(big);
        Case c = file_case(write_raw("raw-" + name, v, shape, order, float64, big));
        c.model.format = ModelSpec::Format::raw;
        c.model.file_shape = {shape[0], shape[1], shape[2]};
        c.model.file_axis_order = order;
        c.model.file_float64 = float64;
        c.model.file_big_endian = big;
        c.model.file_spacing = h;
        c.model.file_origin = o;
        const VelocityModel m = build_velocity_model(c);
        CHECK(m.note.find("(raw)") != std::string::npos);
        check_same_model(m, reference);
      }
  // On the case's grid, without spacing or origin: read as it is.
  const Case grid_case = file_case("");
  const Vec3 gh = grid_case.grid.spacing, go = grid_case.grid.origin;
  const std::array<int, 3> gs = {grid_case.grid.shape[0], grid_case.grid.shape[1], grid_case.grid.shape[2]};
  const std::vector<float> gv = linear_values(gs, gh, go);
  Case c = file_case(write_raw("raw-on-grid", gv, gs, {2, 1, 0}, false, false));
  c.model.format = ModelSpec::Format::raw;
  c.model.file_shape = {gs[0], gs[1], gs[2]};
  c.model.file_axis_order = {2, 1, 0};
  const VelocityModel m = build_velocity_model(c);
  CHECK(m.note.empty());
  CHECK(m.velocity == gv);
  // A file whose size is not the layout's: refused naming both sizes.
  c.model.file_shape = {gs[0], gs[1], gs[2] + 1};
  CHECK_THROWS_WITH_AS(build_velocity_model(c),
                       doctest::Contains("holds 15360 bytes, the layout 20 x 12 x 17 float32 "
                                         "needs 16320"),
                       Error);
}

TEST_CASE("SEG-Y velocity cubes: the grid from the CDP coordinates, the HDF5 model's values; bad cubes refused") {
  const std::array<int, 3> shape = {40, 20, 60};
  const Vec3 h = {7, 13, 4}, o = {90, 40, 10};
  const VelocityModel reference =
      build_velocity_model(file_case(write_model("segy-ref", shape, {7, 13, 4}, {90, 40, 10})));
  const std::vector<float> v = linear_values(shape, h, o);
  const auto segy_case = [&](const std::string& path) {
    Case c = file_case(path);
    c.model.format = ModelSpec::Format::segy;
    c.model.sample_spacing = h[0];
    c.model.sample_origin = o[0];
    return c;
  };
  const VelocityModel m = build_velocity_model(segy_case(write_segy_cube("cube", v, shape, h, o)));
  CHECK(m.note.find("(SEG-Y)") != std::string::npos);
  check_same_model(m, reference);
  // Coordinates not evenly spaced (one column of traces moved by 1 m in x).
  const auto moved = write_segy_cube("cube-uneven", v, shape, h, o, [](std::vector<unsigned char>& th, int, int x) {
    if (x == 5) put_be<std::int32_t>(th, 181, std::int32_t(std::lround((10 + 5 * 4 + 1) * 100.0)));
  });
  CHECK_THROWS_WITH_AS(build_velocity_model(segy_case(moved)), doctest::Contains("are not evenly spaced"), Error);
  // No coordinates at all: every trace at (0, 0).
  const auto zero = write_segy_cube("cube-zero", v, shape, h, o, [](std::vector<unsigned char>& th, int, int) {
    put_be<std::int32_t>(th, 181, 0);
    put_be<std::int32_t>(th, 185, 0);
  });
  CHECK_THROWS_WITH_AS(build_velocity_model(segy_case(zero)),
                       doctest::Contains("every trace has the same CDP coordinates: are they filled in?"), Error);
  // A trace repeated in place of another: one point twice, one missing.
  const auto repeated =
      write_segy_cube("cube-repeat", v, shape, h, o, [](std::vector<unsigned char>& th, int y, int x) {
        if (x == 3 && y == 4) put_be<std::int32_t>(th, 185, std::int32_t(std::lround((40 + 3 * 13) * 100.0)));
      });
  CHECK_THROWS_WITH_AS(build_velocity_model(segy_case(repeated)), doctest::Contains("repeats the CDP position"), Error);
  // A cube that does not reach the grid's bottom: 10 samples of 7 m from z = 90 m end at 153 m, the grid at 290 m.
  const std::array<int, 3> shallow = {10, 20, 60};
  CHECK_THROWS_WITH_AS(
      build_velocity_model(segy_case(write_segy_cube("cube-shallow", linear_values(shallow, h, o), shallow, h, o))),
      doctest::Contains("(SEG-Y) covers z in [90, 153] m"), Error);
}

TEST_CASE(
    "raw and SEG-Y models: the density and the shear velocity from files of the velocity file's layout "
    "(model.density_file, shear_file)") {
  const std::array<int, 3> shape = {40, 20, 60};
  const Vec3 h = {7, 13, 4}, o = {90, 40, 10};
  std::vector<float> vp = linear_values(shape, h, o), vs = vp, rho = vp;
  for (std::size_t k = 0; k < vp.size(); ++k) vs[k] = 0.5f * vp[k] - 100, rho[k] = 0.8f * vp[k] + 300;
  // Each file read as the velocity gives the values the density and the shear velocity must have.
  const auto as_velocity = [&](Case c, const std::string& file) {
    c.model.file = file;
    c.model.shear_file.clear(), c.model.density_file.clear();
    c.scheme.formulation = Formulation::second_order;
    return build_velocity_model(c).velocity;
  };
  const auto check = [&](Case c, const std::string& what) {
    CAPTURE(what);
    c.scheme.formulation = Formulation::elastic;
    const VelocityModel m = build_velocity_model(c);
    CHECK(m.density == as_velocity(c, c.model.density_file));
    std::vector<float> expected = as_velocity(c, c.model.shear_file);
    REQUIRE(m.shear.size() == expected.size());
    CHECK(m.shear == expected);
    CHECK(m.rho_min > 1800);
    CHECK(m.vs_min > 0);
    CHECK(m.note.find(c.model.shear_file) != std::string::npos);
  };
  {
    Case c = file_case(write_raw("vp", vp, shape, {0, 1, 2}, false, true));
    c.model.format = ModelSpec::Format::raw;
    c.model.file_shape = {shape[0], shape[1], shape[2]};
    c.model.file_big_endian = true;
    c.model.file_spacing = h;
    c.model.file_origin = o;
    c.model.shear_file = write_raw("vs", vs, shape, {0, 1, 2}, false, true);
    c.model.density_file = write_raw("rho", rho, shape, {0, 1, 2}, false, true);
    check(c, "raw");
    // A density file of another size than the layout: refused naming it.
    c.model.density_file =
        write_raw("rho-short", std::vector<float>(rho.begin(), rho.end() - 60), {40, 20, 59}, {0, 1, 2}, false, true);
    c.scheme.formulation = Formulation::elastic;
    CHECK_THROWS_WITH_AS(build_velocity_model(c), doctest::Contains("rho-short.bin"), Error);
  }
  {
    Case c = file_case(write_segy_cube("vp", vp, shape, h, o));
    c.model.format = ModelSpec::Format::segy;
    c.model.sample_spacing = h[0];
    c.model.sample_origin = o[0];
    c.model.shear_file = write_segy_cube("vs", vs, shape, h, o);
    c.model.density_file = write_segy_cube("rho", rho, shape, h, o);
    check(c, "SEG-Y");
  }
}
