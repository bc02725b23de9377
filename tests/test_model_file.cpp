// Model files (solver/plan/model.cpp): on the case's grid they are read as they are; on their own grid (shape,
// spacing and origin attributes) they are resampled trilinearly, exactly for linear fields; a model that does not
// cover the grid, or of another shape without its spacing, is refused naming the file.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
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
}
