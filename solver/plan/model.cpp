#include "solver/plan/model.hpp"

#include <fmt/format.h>
#include <cmath>

#include "io/hdf5.hpp"
#include "solver/case/errors.hpp"
#include "solver/parallel/comm.hpp"

namespace specwave {
namespace {

double generated_velocity(const ModelSpec& m, const Vec3& p) {
  switch (m.kind) {
    case ModelSpec::Kind::homogeneous: return m.velocity;
    case ModelSpec::Kind::layered: {
      std::size_t layer = 0;
      while (layer < m.interfaces.size() && p[0] >= m.interfaces[layer]) ++layer;
      return m.velocities[layer];
    }
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

}  // namespace

VelocityModel build_velocity_model(const Case& c, const Subdomain* block, const Comm* comm) {
  const auto& g = c.grid;
  VelocityModel model;
  model.block = block ? *block : subdomain_of(g.shape, {1, 1, 1}, 0);
  const Dims3 b = model.block.begin, e = model.block.extent;
  const bool parallel = comm && comm->size() > 1;
  std::string origin;  // names the data's source in errors
  if (c.model.kind == ModelSpec::Kind::file) {
    io::h5::Parallel par;
    if (parallel) par = {comm->native_handle(), comm->rank(), 0};
    io::h5::Reader reader(c.model.file, par);
    const std::vector<hsize_t> dims = {hsize_t(g.shape[0]), hsize_t(g.shape[1]), hsize_t(g.shape[2])};
    model.velocity =
        reader.read_floating_block<float>(c.model.dataset, dims, {hsize_t(b[0]), hsize_t(b[1]), hsize_t(b[2])},
                                          {hsize_t(e[0]), hsize_t(e[1]), hsize_t(e[2])});
    origin = fmt::format("{}: dataset '{}'", c.model.file, c.model.dataset);
    // A spacing attribute, when present, must agree with the case (a model on another grid is a common mistake).
    io::h5::Handle dset = reader.open_dataset(c.model.dataset);
    if (io::h5::has_attribute(dset.id(), "spacing")) {
      const auto s = io::h5::read_attribute_doubles(dset.id(), "spacing");
      for (int a = 0; a < 3 && s.size() == 3; ++a)
        if (std::abs(s[a] - g.spacing[a]) > 1e-6 * g.spacing[a])
          throw Error(ExitCode::input_error,
                      fmt::format("{}: attribute spacing = [{}, {}, {}] m differs from grid.spacing = [{}, {}, {}] m; "
                                  "resample the model or fix grid.spacing",
                                  origin, s[0], s[1], s[2], g.spacing[0], g.spacing[1], g.spacing[2]));
    }
  } else if (c.model.kind == ModelSpec::Kind::array) {
    const auto* v = c.model.values.get();
    if (!v || v->size() != std::size_t(g.points()))
      throw Error(ExitCode::input_error,
                  fmt::format("model (array): {} values for a grid of {} x {} x {} = {} points; give one velocity a "
                              "grid point, (nz, ny, nx) in C order",
                              v ? v->size() : 0, g.shape[0], g.shape[1], g.shape[2], g.points()));
    model.velocity.resize(std::size_t(e[0]) * e[1] * e[2]);
    origin = "model (array)";
#pragma omp parallel for collapse(2)
    for (int iz = 0; iz < e[0]; ++iz)
      for (int iy = 0; iy < e[1]; ++iy)
        for (int ix = 0; ix < e[2]; ++ix)
          model.velocity[(std::size_t(iz) * e[1] + iy) * e[2] + ix] =
              float((*v)[(std::size_t(iz + b[0]) * g.shape[1] + iy + b[1]) * g.shape[2] + ix + b[2]]);
  } else {
    model.velocity.resize(std::size_t(e[0]) * e[1] * e[2]);
    origin = fmt::format("model ({})", to_string(c.model.kind));
#pragma omp parallel for collapse(2)
    for (int iz = 0; iz < e[0]; ++iz)
      for (int iy = 0; iy < e[1]; ++iy)
        for (int ix = 0; ix < e[2]; ++ix)
          model.velocity[(std::size_t(iz) * e[1] + iy) * e[2] + ix] =
              float(generated_velocity(c.model, g.position(iz + b[0], iy + b[1], ix + b[2])));
  }
  model.v_min = INFINITY;
  model.v_max = 0;
  for (std::size_t i = 0; i < model.velocity.size(); ++i) {
    const double v = model.velocity[i];
    if (!std::isfinite(v) || v <= 0) {
      const std::size_t ix = i % e[2] + b[2], iy = i / e[2] % e[1] + b[1], iz = i / (std::size_t(e[2]) * e[1]) + b[0];
      const bool data = c.model.kind == ModelSpec::Kind::file || c.model.kind == ModelSpec::Kind::array;
      throw Error(data ? ExitCode::input_error : ExitCode::invalid_case,
                  fmt::format("{}: velocity {} m/s at index (z={}, y={}, x={}); velocities must be finite and > 0, "
                              "fix the model there",
                              origin, v, iz, iy, ix));
    }
    model.v_min = std::min(model.v_min, v);
    model.v_max = std::max(model.v_max, v);
  }
  if (parallel) {
    model.v_min = comm->allreduce(model.v_min, ReduceOp::min);
    model.v_max = comm->allreduce(model.v_max, ReduceOp::max);
  }
  return model;
}

}  // namespace specwave
