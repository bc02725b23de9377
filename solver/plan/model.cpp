#include "solver/plan/model.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "io/hdf5.hpp"
#include "io/raw_volume.hpp"
#include "io/segy.hpp"
#include "solver/case/errors.hpp"
#include "solver/parallel/comm.hpp"
#include "solver/plan/plan.hpp"

namespace specwave {
namespace {

// The layer of depth z in a layered model: the number of interfaces at or above it.
std::size_t layer_of(const ModelSpec& m, double z) {
  std::size_t layer = 0;
  while (layer < m.interfaces.size() && z >= m.interfaces[layer]) ++layer;
  return layer;
}

double generated_velocity(const ModelSpec& m, const Vec3& p) {
  switch (m.kind) {
    case ModelSpec::Kind::homogeneous: return m.velocity;
    case ModelSpec::Kind::layered: return m.velocities[layer_of(m, p[0])];
    case ModelSpec::Kind::gaussian: {
      const double r2 = (p[0] - m.center[0]) * (p[0] - m.center[0]) + (p[1] - m.center[1]) * (p[1] - m.center[1]) +
                        (p[2] - m.center[2]) * (p[2] - m.center[2]);
      return m.velocity + m.anomaly * std::exp(-0.5 * r2 / (m.radius * m.radius));
    }
    case ModelSpec::Kind::file:
    case ModelSpec::Kind::array: break;
  }
  return 0;
}

// The box [b, b + e) of values v on the case's grid (nz, ny, nx), C order, as float.
template <class T>
std::vector<float> box_of(const std::vector<T>& v, const GridSpec& g, const Dims3& b, const Dims3& e) {
  std::vector<float> out(std::size_t(e[0]) * e[1] * e[2]);
#pragma omp parallel for collapse(2)
  for (int iz = 0; iz < e[0]; ++iz)
    for (int iy = 0; iy < e[1]; ++iy)
      for (int ix = 0; ix < e[2]; ++ix)
        out[(std::size_t(iz) * e[1] + iy) * e[2] + ix] =
            float(v[(std::size_t(iz + b[0]) * g.shape[1] + iy + b[1]) * g.shape[2] + ix + b[2]]);
  return out;
}

// A model file's own grid: its shape, and its spacing and origin (m, z-y-x) when the file or the case gives them.
struct FileGrid {
  std::array<hsize_t, 3> shape{};
  std::optional<Vec3> spacing, origin;
};

std::string text3(const auto& v) { return fmt::format("[{}, {}, {}]", v[0], v[1], v[2]); }

// What the messages name a model the case generates by: "case.toml: model (gaussian)".
std::string generated_origin(const Case& c) {
  return fmt::format("{}model ({})", c.source_path.empty() ? std::string() : c.source_path + ": ",
                     to_string(c.model.kind));
}

// Whether the file's grid is the case's (same shape; spacing and origin, when given, equal to 1e-6 of a spacing).
bool on_case_grid(const FileGrid& f, const GridSpec& g) {
  const auto close = [](double a, double b, double scale) { return std::abs(a - b) <= 1e-6 * scale; };
  bool same = true;
  for (int a = 0; a < 3; ++a) {
    same = same && f.shape[std::size_t(a)] == hsize_t(g.shape[a]);
    if (f.spacing) same = same && close((*f.spacing)[a], g.spacing[a], g.spacing[a]);
    if (f.origin) same = same && close((*f.origin)[a], g.origin[a], g.spacing[a]);
  }
  return same;
}

// A file on another grid must say its spacing, and must cover the case's grid along every axis on which it has
// more than one point (a model one point thick along an axis is constant along it: a 2-D section for a 3-D grid).
void check_covers(const FileGrid& f, const GridSpec& g, const std::string& where, const std::string& give_grid) {
  const bool same_shape =
      f.shape[0] == hsize_t(g.shape[0]) && f.shape[1] == hsize_t(g.shape[1]) && f.shape[2] == hsize_t(g.shape[2]);
  if (!f.spacing && same_shape && f.origin)
    throw Error(ExitCode::input_error,
                fmt::format("{} has the case's shape ({}, {}, {}) but its origin {} m is not grid.origin {} m, and "
                            "without a spacing it cannot be placed on the case's grid; give the file's spacing = "
                            "[dz, dy, dx] (m) as well so that it can be resampled, or make its origin grid.origin",
                            where, f.shape[0], f.shape[1], f.shape[2], text3(*f.origin), text3(g.origin)));
  if (!f.spacing)
    throw Error(ExitCode::input_error,
                fmt::format("{} has shape ({}, {}, {}), the case's grid ({}, {}, {}); {} so that it can be resampled "
                            "onto the case's grid, or write it on that grid",
                            where, f.shape[0], f.shape[1], f.shape[2], g.shape[0], g.shape[1], g.shape[2], give_grid));
  const Vec3 fo = f.origin.value_or(Vec3{0, 0, 0}), fs = *f.spacing;
  const char* axis = "zyx";
  for (int a = 0; a < 3; ++a) {
    if (f.shape[std::size_t(a)] == 1) continue;
    const double lo = fo[a], hi = fo[a] + double(f.shape[std::size_t(a)] - 1) * fs[a];
    const double need_lo = g.origin[a], need_hi = g.origin[a] + (g.shape[a] - 1) * g.spacing[a];
    const double slack = 1e-6 * fs[a];
    if (need_lo < lo - slack || need_hi > hi + slack)
      throw Error(ExitCode::input_error,
                  fmt::format("{} covers {} in [{}, {}] m (origin {}, spacing {}), the case's grid spans [{}, {}] m "
                              "along {}; the model must cover the whole grid: extend it, or change grid.origin or "
                              "grid.shape",
                              where, axis[a], lo, hi, text3(fo), text3(fs), need_lo, need_hi, axis[a]));
  }
}

// How the box [b, b + e) of the case's grid reads a file's grid trilinearly (check_covers first): per axis, each case
// index's lower file index (counted from lo) and the upper one's weight, and the box [lo, lo + count) of the file's
// grid it reads, so that only that box is read (a large model for a small grid, or a rank's block).
struct Resampling {
  std::array<std::vector<std::pair<std::size_t, double>>, 3> at;
  std::array<hsize_t, 3> lo{}, count{};
};

Resampling resampling(const FileGrid& f, const GridSpec& g, const Dims3& b, const Dims3& e) {
  const Vec3 fo = f.origin.value_or(Vec3{0, 0, 0}), fs = *f.spacing;
  Resampling r;
  for (int a = 0; a < 3; ++a) {
    const std::size_t n = f.shape[std::size_t(a)];
    auto& at = r.at[std::size_t(a)];
    for (int i = b[a]; i < b[a] + e[a]; ++i) {
      if (n == 1) {
        at.push_back({0, 0.0});
        continue;
      }
      const double u = std::clamp((g.origin[a] + i * g.spacing[a] - fo[a]) / fs[a], 0.0, double(n - 1));
      const std::size_t k = std::min(std::size_t(u), n - 2);
      at.push_back({k, u - double(k)});
    }
    std::size_t lo = n, hi = 0;
    for (const auto& [k, w] : at) lo = std::min(lo, k), hi = std::max(hi, n > 1 ? k + 1 : k);
    for (auto& [k, w] : at) k -= lo;
    r.lo[std::size_t(a)] = lo;
    r.count[std::size_t(a)] = hi - lo + 1;
  }
  return r;
}

// The box [b, b + e) of the case's grid from `box`, the file's values in r's box (C order), trilinearly. Exact for
// fields linear in z, y, x.
std::vector<float> resample(const FileGrid& f, const Resampling& r, const std::vector<float>& box, const Dims3& e) {
  const std::size_t ny = r.count[1], nx = r.count[2];
  const auto file_at = [&](std::size_t z, std::size_t y, std::size_t x) { return double(box[(z * ny + y) * nx + x]); };
  std::vector<float> out(std::size_t(e[0]) * e[1] * e[2]);
#pragma omp parallel for collapse(2)
  for (int iz = 0; iz < e[0]; ++iz)
    for (int iy = 0; iy < e[1]; ++iy)
      for (int ix = 0; ix < e[2]; ++ix) {
        const auto [kz, wz] = r.at[0][std::size_t(iz)];
        const auto [ky, wy] = r.at[1][std::size_t(iy)];
        const auto [kx, wx] = r.at[2][std::size_t(ix)];
        const std::size_t z1 = f.shape[0] > 1 ? kz + 1 : kz, y1 = f.shape[1] > 1 ? ky + 1 : ky,
                          x1 = f.shape[2] > 1 ? kx + 1 : kx;
        const double c00 = file_at(kz, ky, kx) * (1 - wx) + file_at(kz, ky, x1) * wx;
        const double c01 = file_at(kz, y1, kx) * (1 - wx) + file_at(kz, y1, x1) * wx;
        const double c10 = file_at(z1, ky, kx) * (1 - wx) + file_at(z1, ky, x1) * wx;
        const double c11 = file_at(z1, y1, kx) * (1 - wx) + file_at(z1, y1, x1) * wx;
        out[(std::size_t(iz) * e[1] + iy) * e[2] + ix] =
            float((c00 * (1 - wy) + c01 * wy) * (1 - wz) + (c10 * (1 - wy) + c11 * wy) * wz);
      }
  return out;
}

// r's box of a whole file's values v (its grid's shape, C order).
std::vector<float> file_box(const FileGrid& f, const Resampling& r, const std::vector<float>& v) {
  std::vector<float> box(std::size_t(r.count[0]) * r.count[1] * r.count[2]);
  for (hsize_t z = 0; z < r.count[0]; ++z)
    for (hsize_t y = 0; y < r.count[1]; ++y)
      std::copy_n(v.begin() + std::ptrdiff_t(((r.lo[0] + z) * f.shape[1] + r.lo[1] + y) * f.shape[2] + r.lo[2]),
                  r.count[2], box.begin() + std::ptrdiff_t((z * r.count[1] + y) * r.count[2]));
  return box;
}

std::string resampled_note(const FileGrid& f, const std::string& where) {
  return fmt::format(
      "model resampled trilinearly onto the grid from {} ({} x {} x {} points, spacing {} m, origin {} m)", where,
      f.shape[0], f.shape[1], f.shape[2], text3(*f.spacing), text3(f.origin.value_or(Vec3{0, 0, 0})));
}

// Where the model's values come from, in errors and notes (`file`: a raw or SEG-Y file's path, default the velocity's).
std::string model_source(const ModelSpec& m, const std::string& file = {}) {
  const std::string& path = file.empty() ? m.file : file;
  switch (m.format) {
    case ModelSpec::Format::hdf5: return fmt::format("{}: dataset '{}'", m.file, m.dataset);
    case ModelSpec::Format::raw: return fmt::format("{} (raw)", path);
    case ModelSpec::Format::segy: return fmt::format("{} (SEG-Y)", path);
  }
  return path;
}

// The box [b, b + e) of the case's grid from an HDF5 model file: read as it is when the file is on the case's grid
// (a decomposed run reads only its block), else resampled trilinearly from the file's own grid.
// `dataset`: the velocity's (model.dataset) or the density's (model.density_dataset).
std::vector<float> read_hdf5_model(const Case& c, const Dims3& b, const Dims3& e, const Comm* comm, std::string& note,
                                   const std::string& dataset) {
  const GridSpec& g = c.grid;
  io::h5::Parallel par;
  if (comm) par = {comm->native_handle(), comm->rank(), 0};
  io::h5::Reader reader(c.model.file, par);
  const std::string where = fmt::format("{}: dataset '{}'", c.model.file, dataset);
  const auto info = reader.info(dataset);
  // A 4-D dataset (k, nz, ny, nx) gives the model at model.index along its first axis (inversion.h5's iterations).
  const auto& index = c.model.index;
  if (index && info.dims.size() != 4)
    throw Error(ExitCode::input_error,
                fmt::format("{} has {} dimension(s); model.index = {} picks a model of a 4-D dataset (k, nz, ny, nx): "
                            "remove model.index for a 3-D one",
                            where, info.dims.size(), *index));
  if (!index && info.dims.size() == 4)
    throw Error(ExitCode::input_error,
                fmt::format("{} is 4-D ({} models); give model.index, the one to read along its first axis (e.g. an "
                            "iteration of inversion.h5's /velocity)",
                            where, info.dims[0]));
  if (info.dims.size() != (index ? 4u : 3u))
    throw Error(ExitCode::input_error,
                fmt::format("{} has {} dimension(s); a model is 3-D (nz, ny, nx), z down", where, info.dims.size()));
  if (index && hsize_t(*index) >= info.dims[0])
    throw Error(ExitCode::input_error, fmt::format("{}: model.index = {} is beyond its {} models (0 to {})", where,
                                                   *index, info.dims[0], info.dims[0] - 1));
  const std::size_t lead = index ? 1 : 0;  // the axes of (nz, ny, nx) in the dataset
  FileGrid f;
  for (int a = 0; a < 3; ++a) f.shape[std::size_t(a)] = info.dims[std::size_t(a) + lead];
  {
    io::h5::Handle dset = reader.open_dataset(dataset);
    for (const char* name : {"spacing", "origin"}) {
      if (!io::h5::has_attribute(dset.id(), name)) continue;
      const auto v = io::h5::read_attribute_doubles(dset.id(), name);
      const bool spacing = std::string(name) == "spacing";
      if (v.size() != 3 || !std::isfinite(v[0]) || !std::isfinite(v[1]) || !std::isfinite(v[2]) ||
          (spacing && (v[0] < min_spacing || v[1] < min_spacing || v[2] < min_spacing)))
        throw Error(ExitCode::input_error,
                    fmt::format("{}: attribute {} must be 3 finite numbers{} (m, z-y-x), found {}", where, name,
                                spacing ? " of at least 1e-9" : "",
                                v.size() == 3 ? text3(v) : fmt::format("{} values", v.size())));
      (spacing ? f.spacing : f.origin) = Vec3{v[0], v[1], v[2]};
    }
  }
  // The box [begin, begin + count) of the model (of model k of a 4-D dataset).
  const auto block = [&](std::vector<hsize_t> begin, std::vector<hsize_t> count) {
    std::vector<hsize_t> dims = {f.shape[0], f.shape[1], f.shape[2]};
    if (index) {
      dims.insert(dims.begin(), info.dims[0]);
      begin.insert(begin.begin(), hsize_t(*index));
      count.insert(count.begin(), 1);
    }
    return reader.read_floating_block<float>(dataset, dims, begin, count);
  };
  if (on_case_grid(f, g))
    return block({hsize_t(b[0]), hsize_t(b[1]), hsize_t(b[2])}, {hsize_t(e[0]), hsize_t(e[1]), hsize_t(e[2])});
  check_covers(f, g, where,
               "give the model's grid as dataset attributes spacing = [dz, dy, dx] and origin = [oz, oy, ox] (m)");
  note = resampled_note(f, where);
  const Resampling r = resampling(f, g, b, e);
  // A model far finer than the grid reads a large box of itself: refused before it is allocated.
  const double box_bytes = 4.0 * double(r.count[0]) * double(r.count[1]) * double(r.count[2]);
  if (const std::size_t available = available_memory_bytes(); available && box_bytes > 0.5 * double(available))
    throw Error(ExitCode::resources,
                fmt::format("{}: resampling it onto the grid reads a box of ({}, {}, {}) of its points ({}), more than "
                            "half the memory available ({}): its spacing {} m is far finer than the grid's; give a "
                            "model sampled nearer the grid's spacing",
                            where, r.count[0], r.count[1], r.count[2], human_bytes(box_bytes),
                            human_bytes(double(available)), text3(*f.spacing)));
  return resample(f, r, block({r.lo[0], r.lo[1], r.lo[2]}, {r.count[0], r.count[1], r.count[2]}), e);
}

// The same from a raw binary file or a SEG-Y cube, which are read whole: the velocity's (model.file) or, with `file`,
// the density's or the shear velocity's (model.density_file, shear_file: the same format and layout).
std::vector<float> read_whole_model(const Case& c, const Dims3& b, const Dims3& e, std::string& note,
                                    const std::string& file = {}) {
  const GridSpec& g = c.grid;
  const ModelSpec& m = c.model;
  const std::string& path = file.empty() ? m.file : file;
  const std::string where = model_source(m, path);
  FileGrid f;
  std::vector<float> v;
  std::string give_grid;
  if (m.format == ModelSpec::Format::raw) {
    io::RawLayout layout;
    layout.shape = m.file_shape;
    layout.float64 = m.file_float64;
    layout.big_endian = m.file_big_endian;
    layout.order = m.file_axis_order;
    for (int a = 0; a < 3; ++a) f.shape[std::size_t(a)] = hsize_t(m.file_shape[std::size_t(a)]);
    f.spacing = m.file_spacing;
    f.origin = m.file_origin;
    give_grid = "give the model's grid as model.spacing = [dz, dy, dx] and model.origin = [oz, oy, ox] (m)";
    v = io::read_raw_volume(path, layout);
  } else {
    io::SegyVolume s = io::read_segy_volume(path);
    for (int a = 0; a < 3; ++a) f.shape[std::size_t(a)] = hsize_t(s.shape[std::size_t(a)]);
    f.spacing = Vec3{m.sample_spacing, s.spacing_y, s.spacing_x};
    f.origin = Vec3{m.sample_origin, s.origin_y, s.origin_x};
    v = std::move(s.values);
  }
  if (on_case_grid(f, g)) return box_of(v, g, b, e);
  check_covers(f, g, where, give_grid);
  note = resampled_note(f, where);
  const Resampling r = resampling(f, g, b, e);
  return resample(f, r, file_box(f, r, v), e);
}

// The least and largest of `values` (the points of `block`), refusing (Error input_error, naming the point's global
// index) a value outside [lo, hi] (NaN and infinities included: hi is finite), which `rule` states.
void checked_range(const std::vector<float>& values, const Subdomain& block, const std::string& origin,
                   const char* what, const char* unit, double lo, double hi, const std::string& rule, double& least,
                   double& largest) {
  const Dims3 b = block.begin, e = block.extent;
  least = INFINITY;
  largest = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double v = values[i];
    if (!(v >= lo && v <= hi)) {  // NaN included
      const std::size_t ix = i % e[2] + b[2], iy = i / e[2] % e[1] + b[1], iz = i / (std::size_t(e[2]) * e[1]) + b[0];
      throw Error(
          ExitCode::input_error,
          fmt::format("{}: {} {}{}{} at index (z={}, y={}, x={}); {} must be finite and {}, fix the model there",
                      origin, what, v, *unit ? " " : "", unit, iz, iy, ix, what, rule));
    }
    least = std::min(least, v);
    largest = std::max(largest, v);
  }
}

// The density of the staggered scheme on the model's block (docs/numerics.md, "Variable density"): the density model,
// or the constant model.density (1000 kg/m^3 when none is given: a constant density changes no pressure).
void build_density(const Case& c, VelocityModel& model, const Comm* comm) {
  const auto& g = c.grid;
  const ModelSpec& m = c.model;
  const Dims3 b = model.block.begin, e = model.block.extent;
  const bool parallel = comm && comm->size() > 1;
  std::string origin;
  if (!m.density_dataset.empty()) {
    origin = fmt::format("{}: dataset '{}'", m.file, m.density_dataset);
    std::string note;
    model.density = read_hdf5_model(c, b, e, parallel ? comm : nullptr, note, m.density_dataset);
    if (!note.empty()) model.note += (model.note.empty() ? "" : "; ") + note;
  } else if (!m.density_file.empty()) {
    origin = model_source(m, m.density_file);
    std::string note;
    model.density = read_whole_model(c, b, e, note, m.density_file);
    if (!note.empty()) model.note += (model.note.empty() ? "" : "; ") + note;
  } else {
    origin = generated_origin(c);
    model.density.resize(std::size_t(e[0]) * e[1] * e[2]);
#pragma omp parallel for collapse(2)
    for (int iz = 0; iz < e[0]; ++iz)
      for (int iy = 0; iy < e[1]; ++iy)
        for (int ix = 0; ix < e[2]; ++ix) {
          double rho = m.density.value_or(1000.0);
          if (!m.densities.empty()) rho = m.densities[layer_of(m, g.position(iz + b[0], iy + b[1], ix + b[2])[0])];
          model.density[(std::size_t(iz) * e[1] + iy) * e[2] + ix] = float(rho);
        }
  }
  checked_range(model.density, model.block, origin, "density", "kg/m^3", min_density, max_density,
                "in [1e-3, 1e6] kg/m^3 (other units, or misread?)", model.rho_min, model.rho_max);
  if (parallel) {
    model.rho_min = comm->allreduce(model.rho_min, ReduceOp::min);
    model.rho_max = comm->allreduce(model.rho_max, ReduceOp::max);
  }
}

// The elastic scheme's shear velocity on the model's block (docs/numerics.md, "Isotropic elastic waves"): a constant,
// one a layer, or a dataset of the model file; finite and >= 0 (0: a fluid), and below sqrt(3)/2 of the velocity at
// the same point (a positive bulk modulus). vs_min is the least non-zero shear velocity (0 when all is fluid), and
// v_slowest the slowest wave of any point (vs, or vp in a fluid), which sets the points per wavelength.
void build_shear(const Case& c, VelocityModel& model, const Comm* comm) {
  const auto& g = c.grid;
  const ModelSpec& m = c.model;
  if (!m.has_shear_velocity())  // (a ModelSpec rebuilt without its shear keys would otherwise run a fluid)
    throw std::logic_error("build_shear: the elastic scheme's model has no shear velocity");
  const Dims3 b = model.block.begin, e = model.block.extent;
  const bool parallel = comm && comm->size() > 1;
  std::string origin;
  if (!m.shear_dataset.empty()) {
    origin = fmt::format("{}: dataset '{}'", m.file, m.shear_dataset);
    std::string note;
    model.shear = read_hdf5_model(c, b, e, parallel ? comm : nullptr, note, m.shear_dataset);
    if (!note.empty()) model.note += (model.note.empty() ? "" : "; ") + note;
  } else if (!m.shear_file.empty()) {
    origin = model_source(m, m.shear_file);
    std::string note;
    model.shear = read_whole_model(c, b, e, note, m.shear_file);
    if (!note.empty()) model.note += (model.note.empty() ? "" : "; ") + note;
  } else {
    origin = fmt::format("{}{}", c.source_path.empty() ? std::string() : c.source_path + ": ",
                         m.shear_velocity ? "model.shear_velocity" : "model.shear_velocities");
    model.shear.resize(std::size_t(e[0]) * e[1] * e[2]);
#pragma omp parallel for collapse(2)
    for (int iz = 0; iz < e[0]; ++iz)
      for (int iy = 0; iy < e[1]; ++iy)
        for (int ix = 0; ix < e[2]; ++ix) {
          double vs = m.shear_velocity.value_or(0.0);
          const Vec3 p = g.position(iz + b[0], iy + b[1], ix + b[2]);
          if (!m.shear_velocities.empty()) vs = m.shear_velocities[layer_of(m, p[0])];
          if (m.kind == ModelSpec::Kind::gaussian && m.shear_anomaly != 0) {
            const Vec3 o = m.shear_center.value_or(m.center);
            const double r2 =
                (p[0] - o[0]) * (p[0] - o[0]) + (p[1] - o[1]) * (p[1] - o[1]) + (p[2] - o[2]) * (p[2] - o[2]);
            vs += m.shear_anomaly * std::exp(-0.5 * r2 / (m.radius * m.radius));
          }
          model.shear[(std::size_t(iz) * e[1] + iy) * e[2] + ix] = float(vs);
        }
  }
  model.vs_min = INFINITY, model.vs_max = 0, model.v_slowest = INFINITY;
  double poisson_worst = 0;
  std::size_t negative_poisson = 0, worst = 0;
  for (std::size_t i = 0; i < model.shear.size(); ++i) {
    const double vs = model.shear[i], vp = model.velocity[i];
    const std::size_t ix = i % e[2] + b[2], iy = i / e[2] % e[1] + b[1], iz = i / (std::size_t(e[2]) * e[1]) + b[0];
    if (!std::isfinite(vs) || vs < 0)
      throw Error(ExitCode::input_error,
                  fmt::format("{}: shear velocity {} m/s at index (z={}, y={}, x={}); shear velocities must be finite "
                              "and >= 0 (0 for a fluid), fix the model there",
                              origin, vs, iz, iy, ix));
    if (vs >= std::sqrt(0.75) * vp)
      throw Error(ExitCode::invalid_case,
                  fmt::format("{}: shear velocity {:.6g} m/s at index (z={}, y={}, x={}) is >= sqrt(3)/2 of the "
                              "velocity {:.6g} m/s there (vs / vp = {:.4f}): the bulk modulus rho (vp^2 - 4 vs^2 / 3) "
                              "would be <= 0; check that the velocity is vp and the shear velocity vs (vs < {:.6g} m/s "
                              "there)",
                              origin, vs, iz, iy, ix, vp, vs / vp, std::sqrt(0.75) * vp));
    if (vs > vp / std::sqrt(2.0)) {
      ++negative_poisson;
      if (vs / vp > poisson_worst) poisson_worst = vs / vp, worst = i;
    }
    if (vs > 0) model.vs_min = std::min(model.vs_min, vs);
    model.vs_max = std::max(model.vs_max, vs);
    model.v_slowest = std::min(model.v_slowest, vs > 0 ? vs : vp);
  }
  const bool block = model.block.extent != c.grid.shape;  // (the elastic scheme's ranks hold the whole grid)
  if (parallel && block) {
    model.vs_min = comm->allreduce(model.vs_min, ReduceOp::min);
    model.vs_max = comm->allreduce(model.vs_max, ReduceOp::max);
    model.v_slowest = comm->allreduce(model.v_slowest, ReduceOp::min);
    negative_poisson = std::size_t(comm->allreduce(double(negative_poisson), ReduceOp::sum));
  }
  if (!std::isfinite(model.vs_min)) model.vs_min = 0;
  if (negative_poisson > 0) {
    const std::size_t ix = worst % e[2] + b[2], iy = worst / e[2] % e[1] + b[1],
                      iz = worst / (std::size_t(e[2]) * e[1]) + b[0];
    model.warnings.push_back(fmt::format(
        "{}: {} point(s) have vs > vp / sqrt(2), a negative Poisson ratio (lambda < 0; physical for few rocks), the "
        "largest vs / vp = {:.4f} at index (z={}, y={}, x={}){}",
        origin, negative_poisson, poisson_worst, iz, iy, ix, parallel && block ? " (the largest on one rank)" : ""));
  }
}

// Q on the model's block ([attenuation]): a constant, one a layer, or a dataset of the model file.
void build_q(const Case& c, VelocityModel& model, const Comm* comm) {
  const auto& g = c.grid;
  const AttenuationSpec& a = c.attenuation;
  const Dims3 b = model.block.begin, e = model.block.extent;
  const bool parallel = comm && comm->size() > 1;
  std::string origin;
  if (!a.q_dataset.empty()) {
    origin = fmt::format("{}: dataset '{}'", c.model.file, a.q_dataset);
    std::string note;
    model.q = read_hdf5_model(c, b, e, parallel ? comm : nullptr, note, a.q_dataset);
    if (!note.empty()) model.note += (model.note.empty() ? "" : "; ") + note;
  } else {
    origin = "attenuation.q";
    model.q.resize(std::size_t(e[0]) * e[1] * e[2]);
#pragma omp parallel for collapse(2)
    for (int iz = 0; iz < e[0]; ++iz)
      for (int iy = 0; iy < e[1]; ++iy)
        for (int ix = 0; ix < e[2]; ++ix) {
          double q = a.q.value_or(0.0);
          if (!a.q_layers.empty()) q = a.q_layers[layer_of(c.model, g.position(iz + b[0], iy + b[1], ix + b[2])[0])];
          model.q[(std::size_t(iz) * e[1] + iy) * e[2] + ix] = float(q);
        }
  }
  checked_range(model.q, model.block, origin, "Q", "", 1, std::numeric_limits<double>::max(), ">= 1", model.q_min,
                model.q_max);
  if (parallel) {
    model.q_min = comm->allreduce(model.q_min, ReduceOp::min);
    model.q_max = comm->allreduce(model.q_max, ReduceOp::max);
  }
}

}  // namespace

double point_density(const PointStencil& stencil, const VelocityModel& model) {
  return point_density(stencil, model.density, model.block.extent);
}

namespace {

// sum_p |w_p| rho_p / sum_p |w_p| (1 where every weight is 0).
template <class D>
double abs_weighted_mean(const PointStencil& stencil, std::span<const D> density, const std::array<int, 3>& shape) {
  double sum_abs = 0, sum_abs_r = 0;
  for (const auto& p : stencil.points) {
    const double rho = density[(std::size_t(p.iz) * shape[1] + p.iy) * shape[2] + p.ix];
    sum_abs += std::abs(p.weight), sum_abs_r += std::abs(p.weight) * rho;
  }
  return sum_abs > 0 ? sum_abs_r / sum_abs : 1.0;
}

}  // namespace

double point_density(const PointStencil& stencil, std::span<const float> density, const std::array<int, 3>& shape) {
  return abs_weighted_mean(stencil, density, shape);
}

double point_density(const PointStencil& stencil, std::span<const double> density, const std::array<int, 3>& shape) {
  return abs_weighted_mean(stencil, density, shape);
}

std::vector<double> point_density_derivative(const PointStencil& stencil) {
  double sum = 0;
  for (const auto& p : stencil.points) sum += std::abs(p.weight);
  std::vector<double> out;
  for (const auto& p : stencil.points) out.push_back(sum > 0 ? std::abs(p.weight) / sum : 0.0);
  return out;
}

double point_density_change(const PointStencil& stencil, std::span<const double> drho,
                            const std::array<int, 3>& shape) {
  const std::vector<double> share = point_density_derivative(stencil);
  double change = 0;
  for (std::size_t k = 0; k < share.size(); ++k) {
    const auto& p = stencil.points[k];
    change += share[k] * drho[(std::size_t(p.iz) * shape[1] + p.iy) * shape[2] + p.ix];
  }
  return change;
}

VelocityModel build_velocity_model(const Case& c, const Subdomain* block, const Comm* comm) {
  const auto& g = c.grid;
  VelocityModel model;
  model.block = block ? *block : subdomain_of(g.shape, {1, 1, 1}, 0);
  const Dims3 b = model.block.begin, e = model.block.extent;
  const bool parallel = comm && comm->size() > 1;
  std::string origin;  // names the data's source in errors
  if (c.model.kind == ModelSpec::Kind::file) {
    origin = model_source(c.model);
    model.velocity = c.model.format == ModelSpec::Format::hdf5
                         ? read_hdf5_model(c, b, e, parallel ? comm : nullptr, model.note, c.model.dataset)
                         : read_whole_model(c, b, e, model.note);
  } else if (c.model.kind == ModelSpec::Kind::array) {
    const auto* v = c.model.values.get();
    if (!v || v->size() != std::size_t(g.points()))
      throw Error(ExitCode::input_error,
                  fmt::format("model (array): {} values for a grid of {} x {} x {} = {} points; give one velocity a "
                              "grid point, (nz, ny, nx) in C order",
                              v ? v->size() : 0, g.shape[0], g.shape[1], g.shape[2], g.points()));
    origin = "model (array)";
    model.velocity = box_of(*v, g, b, e);
  } else {
    model.velocity.resize(std::size_t(e[0]) * e[1] * e[2]);
    origin = generated_origin(c);
#pragma omp parallel for collapse(2)
    for (int iz = 0; iz < e[0]; ++iz)
      for (int iy = 0; iy < e[1]; ++iy)
        for (int ix = 0; ix < e[2]; ++ix)
          model.velocity[(std::size_t(iz) * e[1] + iy) * e[2] + ix] =
              float(generated_velocity(c.model, g.position(iz + b[0], iy + b[1], ix + b[2])));
  }
  model.v_min = INFINITY;
  model.v_max = 0;
  // A model's data in m/s: from 1 m/s to 1e6 m/s (outside, a file's values are in other units or misread: its byte
  // order, sample format or dataset; a later check would blame the time step or the sampling instead).
  const bool data = c.model.kind == ModelSpec::Kind::file || c.model.kind == ModelSpec::Kind::array;
  for (std::size_t i = 0; i < model.velocity.size(); ++i) {
    const double v = model.velocity[i];
    const bool bad = !std::isfinite(v) || v <= 0, implausible = data && !bad && (v < 1 || v > 1e6);
    if (bad || implausible) {
      const std::size_t ix = i % e[2] + b[2], iy = i / e[2] % e[1] + b[1], iz = i / (std::size_t(e[2]) * e[1]) + b[0];
      throw Error(
          data ? ExitCode::input_error : ExitCode::invalid_case,
          bad ? fmt::format("{}: velocity {} m/s at index (z={}, y={}, x={}); velocities must be finite and > "
                            "0, fix the model there",
                            origin, v, iz, iy, ix)
              : fmt::format("{}: velocity {:g} m/s at index (z={}, y={}, x={}) is outside [1, 1e6] m/s: are the "
                            "values in m/s, and is the file read as written (a raw file's byte_order and "
                            "format, the dataset)?",
                            origin, v, iz, iy, ix));
    }
    model.v_min = std::min(model.v_min, v);
    model.v_max = std::max(model.v_max, v);
  }
  if (parallel) {
    model.v_min = comm->allreduce(model.v_min, ReduceOp::min);
    model.v_max = comm->allreduce(model.v_max, ReduceOp::max);
  }
  // A Gaussian anomaly narrower than the grid can fall between its points and change nothing: say so.
  if (c.model.kind == ModelSpec::Kind::gaussian && c.model.anomaly != 0) {
    const double reached = std::max(std::abs(model.v_max - c.model.velocity), std::abs(model.v_min - c.model.velocity));
    if (reached < 0.5 * std::abs(c.model.anomaly))
      model.warnings.push_back(fmt::format(
          "model.anomaly = {:g} m/s changes no grid point by more than {:.3g} m/s ({:.0f}% of it): its radius, {:g} "
          "m, is small against the grid's spacing or its centre lies off the grid; widen model.radius to a few grid "
          "spacings for an anomaly the grid resolves",
          c.model.anomaly, reached, 100 * reached / std::abs(c.model.anomaly), c.model.radius));
  }
  // The staggered scheme's density (the constant one without a density model), and the k-space method's density model.
  if (c.scheme.formulation == Formulation::staggered || c.scheme.formulation == Formulation::elastic ||
      (c.scheme.method == Method::spectral && c.model.has_density_model()))
    build_density(c, model, comm);
  if (c.scheme.formulation == Formulation::elastic) build_shear(c, model, comm);
  if (c.attenuation.present) build_q(c, model, comm);
  return model;
}

}  // namespace specwave
