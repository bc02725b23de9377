#include "solver/inversion/inversion_outputs.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <regex>

#include "io/hdf5.hpp"
#include "io/outputs.hpp"
#include "io/png_plot.hpp"
#include "io/text_file.hpp"
#include "io/vtkhdf.hpp"
#include "solver/case/errors.hpp"

namespace specwave {
namespace fs = std::filesystem;

namespace {

std::string number(double v) { return std::isfinite(v) ? fmt::format("{:.17g}", v) : "null"; }

// A plot's word for a recorded parameter.
const char* label_of(const char* name) { return std::string_view(name) == "density" ? "density" : "shear velocity"; }

}  // namespace

std::string json_line(const InversionIteration& it) {
  std::string shots;
  for (const double j : it.misfit_per_shot) {
    if (!shots.empty()) shots += ", ";
    shots += number(j);
  }
  return fmt::format(
      "{{\"iteration\": {}, \"misfit\": {}, \"relative_misfit\": {}, \"step\": {}, \"evaluations\": {}, \"wolfe\": {}, "
      "\"gradient_norm\": {}, \"seconds\": {}, \"model_error\": {}, \"band_hz\": {}, \"misfit_per_shot\": [{}]{}}}",
      it.iteration, number(it.misfit), number(it.relative_misfit), number(it.step), it.evaluations,
      it.wolfe ? "true" : "false", number(it.gradient_norm), number(it.seconds),
      it.model_error ? number(*it.model_error) : "null", it.band_hz ? number(*it.band_hz) : "null", shots,
      (it.density_error ? fmt::format(", \"density_error\": {}", number(*it.density_error)) : std::string()) +
          (it.shear_error ? fmt::format(", \"shear_error\": {}", number(*it.shear_error)) : std::string()));
}

InversionRecorder::InversionRecorder(const Case& c, int threads, std::string optimizer,
                                     std::vector<double> true_velocity, std::vector<double> true_density,
                                     std::vector<double> true_shear)
    : case_(c),
      threads_(threads),
      optimizer_(std::move(optimizer)),
      directory_(c.output.directory),
      true_velocity_(std::move(true_velocity)),
      extra_{Extra{"density",
                   "kg/m^3",
                   "density_error",
                   "density_slices.png",
                   &InversionIteration::density_error,
                   c.inversion.density_parameter,
                   std::move(true_density),
                   {},
                   {}},
             Extra{"shear_velocity",
                   "m/s",
                   "shear_error",
                   "shear_slices.png",
                   &InversionIteration::shear_error,
                   c.inversion.shear_velocity_changes(),
                   std::move(true_shear),
                   {},
                   {}}} {
  std::error_code ec;
  fs::create_directories(directory_, ec);
  if (ec)
    throw Error(ExitCode::output_error, fmt::format("{}: cannot create the output directory ({}); set output.directory "
                                                    "or --output-dir to a writable place",
                                                    directory_, ec.message()));
}

void InversionRecorder::record(const InversionIteration& it, std::span<const double> velocity,
                               std::span<const double> gradient, std::span<const double> density,
                               std::span<const double> density_gradient, std::span<const double> shear,
                               std::span<const double> shear_gradient) {
  const std::size_t points = std::size_t(case_.grid.points());
  const std::span<const double> values[2] = {density, shear}, gradients[2] = {density_gradient, shear_gradient};
  for (int k = 0; k < 2; ++k)
    if (extra_[k].on && (values[k].size() != points || gradients[k].size() != points))
      throw std::logic_error(
          fmt::format("InversionRecorder::record: an inversion of the {} records its values and "
                      "gradient",
                      extra_[k].name));
  history_.push_back(it);
  velocities_.insert(velocities_.end(), velocity.begin(), velocity.end());
  gradients_.insert(gradients_.end(), gradient.begin(), gradient.end());
  for (int k = 0; k < 2; ++k) {
    extra_[k].values.insert(extra_[k].values.end(), values[k].begin(), values[k].end());
    extra_[k].gradients.insert(extra_[k].gradients.end(), gradients[k].begin(), gradients[k].end());
  }
  write_h5();
  write_jsonl();
  // The model of this (the last completed) iteration as a model input: model.type = "file" or --model read it
  // (and model.density_dataset = "/density" its density, model.shear_dataset = "/shear_velocity" its shear velocity).
  const std::size_t last = (history_.size() - 1) * points;
  const auto latest = [&](const Extra& e) {
    return e.on ? std::span<const float>(e.values.data() + last, points) : std::span<const float>();
  };
  io::write_model_file((fs::path(directory_) / "model_final.h5").string(),
                       {"specwave.model", "fp64", "cpu", case_.source_text, "host CPU", threads_, 1}, case_.grid,
                       std::span<const float>(velocities_.data() + last, points), {0, 0, 0}, {-1, -1, -1}, {},
                       latest(extra_[0]), latest(extra_[1]));
}

void InversionRecorder::restore(const std::vector<InversionIteration>& history) {
  const GridSpec& g = case_.grid;
  const std::string path = (fs::path(directory_) / "inversion.h5").string();
  io::h5::Reader r(path);
  const std::vector<hsize_t> dims = {hsize_t(history.size()), hsize_t(g.shape[0]), hsize_t(g.shape[1]),
                                     hsize_t(g.shape[2])};
  history_ = history;
  velocities_ = r.read_floating<float>("velocity", dims);
  gradients_ = r.read_floating<float>("gradient", dims);
  for (Extra& e : extra_)
    if (e.on) {
      e.values = r.read_floating<float>(e.name, dims);
      e.gradients = r.read_floating<float>(std::string(e.name) + "_gradient", dims);
    }
}

void InversionRecorder::write_jsonl() const {
  std::string text;
  for (const auto& it : history_) text += json_line(it) + "\n";
  io::write_text_atomically((fs::path(directory_) / "iterations.jsonl").string(), text,
                            "choose another output.directory");
}

void InversionRecorder::write_h5() const {
  const GridSpec& g = case_.grid;
  const hsize_t n = history_.size();
  const std::vector<hsize_t> field = {n, hsize_t(g.shape[0]), hsize_t(g.shape[1]), hsize_t(g.shape[2])};
  io::h5::AtomicWriter file((fs::path(directory_) / "inversion.h5").string());
  io::h5::write_root_attributes(file.id(),
                                {"specwave.inversion", "fp64", "cpu", case_.source_text, "host CPU", threads_, 1});
  io::h5::write_attribute(file.id(), "optimizer", optimizer_);
  io::h5::write_attribute(file.id(), "parameterisation", std::string(to_string(case_.inversion.parameterisation)));
  io::h5::write_attribute(file.id(), "iterations_completed", std::int64_t(n - 1));
  {
    auto d = io::h5::write_dataset<float>(file.id(), "velocity", field, velocities_.data(), "m/s");
    io::write_grid_attributes(d.id(), g);
  }
  {
    const std::string units =
        case_.inversion.parameterisation == Parameterisation::velocity ? "misfit / (m/s)" : "misfit / (s^2/m^2)";
    auto d = io::h5::write_dataset<float>(file.id(), "gradient", field, gradients_.data(), units);
    io::write_grid_attributes(d.id(), g);
  }
  for (const Extra& e : extra_) {
    if (!e.on) continue;
    auto d = io::h5::write_dataset<float>(file.id(), e.name, field, e.values.data(), e.units);
    io::write_grid_attributes(d.id(), g);
    auto q = io::h5::write_dataset<float>(file.id(), std::string(e.name) + "_gradient", field, e.gradients.data(),
                                          fmt::format("misfit / ({})", e.units));
    io::write_grid_attributes(q.id(), g);
  }
  std::vector<double> misfit, relative, step, norm, seconds, error, per_shot;
  std::vector<double> extra_error[2];
  std::vector<std::int32_t> evaluations, wolfe;
  const std::size_t shots = case_.shots.size();
  for (const auto& it : history_) {
    if (it.misfit_per_shot.size() == shots)
      per_shot.insert(per_shot.end(), it.misfit_per_shot.begin(), it.misfit_per_shot.end());
    else  // not known: an iteration resumed from the state of an older specwave
      per_shot.insert(per_shot.end(), shots, NAN);
    misfit.push_back(it.misfit), relative.push_back(it.relative_misfit), step.push_back(it.step);
    norm.push_back(it.gradient_norm), seconds.push_back(it.seconds), evaluations.push_back(it.evaluations);
    wolfe.push_back(it.wolfe ? 1 : 0);
    if (it.model_error) error.push_back(*it.model_error);
    for (int k = 0; k < 2; ++k)
      if (it.*extra_[k].error_of) extra_error[k].push_back(*(it.*extra_[k].error_of));
  }
  const std::vector<hsize_t> dims = {n};
  io::h5::write_dataset<double>(file.id(), "misfit", dims, misfit.data(), "misfit (least squares, s * amplitude^2)");
  io::h5::write_dataset<double>(file.id(), "misfit_per_shot", {n, hsize_t(shots)}, per_shot.data(),
                                "misfit of each shot (least squares, s * amplitude^2)");
  io::h5::write_dataset<double>(file.id(), "relative_misfit", dims, relative.data(), "1");
  io::h5::write_dataset<double>(file.id(), "step", dims, step.data(), "1");
  io::h5::write_dataset<double>(file.id(), "gradient_norm", dims, norm.data(), "misfit / parameter unit");
  io::h5::write_dataset<double>(file.id(), "seconds", dims, seconds.data(), "s");
  io::h5::write_dataset<std::int32_t>(file.id(), "evaluations", dims, evaluations.data(), "1");
  io::h5::write_dataset<std::int32_t>(file.id(), "wolfe", dims, wolfe.data(), "1");
  if (!true_velocity_.empty()) {
    io::h5::write_dataset<double>(file.id(), "model_error", dims, error.data(), "1");
    const std::vector<float> tv(true_velocity_.begin(), true_velocity_.end());
    auto d = io::h5::write_dataset<float>(
        file.id(), "true_velocity", {hsize_t(g.shape[0]), hsize_t(g.shape[1]), hsize_t(g.shape[2])}, tv.data(), "m/s");
    io::write_grid_attributes(d.id(), g);
  }
  for (int k = 0; k < 2; ++k) {
    const Extra& e = extra_[k];
    if (e.truth.empty()) continue;
    if (extra_error[k].size() == n) io::h5::write_dataset<double>(file.id(), e.error, dims, extra_error[k].data(), "1");
    const std::vector<float> t(e.truth.begin(), e.truth.end());
    auto d = io::h5::write_dataset<float>(file.id(), std::string("true_") + e.name,
                                          {hsize_t(g.shape[0]), hsize_t(g.shape[1]), hsize_t(g.shape[2])}, t.data(),
                                          e.units);
    io::write_grid_attributes(d.id(), g);
  }
  file.commit();
  // ParaView views (io/vtkhdf.hpp): each iteration's model and gradient, ParaView's time series over the iterations.
  const std::string h5 = (fs::path(directory_) / "inversion.h5").string();
  for (hsize_t k = 0; k < n; ++k) {
    const auto at = static_cast<long long>(k);
    std::vector<io::ViewArray> arrays = {{"velocity", "/velocity", at}, {"gradient", "/gradient", at}};
    for (const Extra& e : extra_)
      if (e.on)
        arrays.insert(arrays.end(), {{e.name, std::string("/") + e.name, at},
                                     {std::string(e.name) + "_gradient", std::string("/") + e.name + "_gradient", at}});
    io::write_vtkhdf_view((fs::path(directory_) / fmt::format("inversion_iteration{:04d}.vtkhdf", k)).string(), h5, g,
                          arrays);
  }
  // Views of iterations that inversion.h5 does not hold (an earlier, longer run's in this folder) would join
  // ParaView's series: removed, as is a true model's view without a true model.
  static const std::regex iteration_view(R"(inversion_iteration(\d{4,})\.vtkhdf)");
  std::error_code ec;
  std::vector<fs::path> stale;
  for (const auto& entry : fs::directory_iterator(directory_, ec)) {
    const std::string name = entry.path().filename().string();
    std::smatch m;
    if (std::regex_match(name, m, iteration_view) && std::stoull(m[1].str()) >= n) stale.push_back(entry.path());
  }
  if (true_velocity_.empty()) stale.push_back(fs::path(directory_) / "inversion_true_velocity.vtkhdf");
  for (const fs::path& p : stale) fs::remove(p, ec);
  if (!true_velocity_.empty()) {
    std::vector<io::ViewArray> arrays = {{"true_velocity", "/true_velocity"}};
    for (const Extra& e : extra_)
      if (!e.truth.empty()) arrays.push_back({std::string("true_") + e.name, std::string("/true_") + e.name});
    io::write_vtkhdf_view((fs::path(directory_) / "inversion_true_velocity.vtkhdf").string(), h5, g, arrays);
  }
}

namespace {

// xz slices at the middle y, in metres and true to scale: start | final | true (when known) on one scale, and the
// update (final - start) on its own symmetric scale. `frames`: the recorded models, (iterations + 1, nz, ny, nx).
void write_model_panels(const Case& c, const fs::path& path, const std::vector<float>& frames, int last_iteration,
                        const std::vector<double>& truth, const char* what, const char* units) {
  const GridSpec& g = c.grid;
  const int nz = g.shape[0], ny = g.shape[1], nx = g.shape[2], y = ny / 2;
  const std::size_t points = std::size_t(nz) * ny * nx;
  const auto slice = [&](const auto* v) {  // float (the iterations) or double (the true model)
    std::vector<float> out(std::size_t(nz) * nx);
    for (int z = 0; z < nz; ++z)
      for (int i = 0; i < nx; ++i) out[std::size_t(z) * nx + i] = float(v[(std::size_t(z) * ny + y) * nx + i]);
    return out;
  };
  std::vector<std::vector<float>> slices = {slice(frames.data()), slice(frames.data() + frames.size() - points)};
  std::vector<std::string> titles = {"start", fmt::format("iteration {}", last_iteration)};
  if (!truth.empty()) slices.push_back(slice(truth.data())), titles.push_back("true");
  float lo = INFINITY, hi = -INFINITY;
  for (const auto& sl : slices)
    for (float v : sl) lo = std::min(lo, v), hi = std::max(hi, v);
  std::vector<float> update(slices[0].size());
  for (std::size_t k = 0; k < update.size(); ++k) update[k] = slices[1][k] - slices[0][k];

  io::ImagePlot base;
  base.x_label = "x (m)", base.y_label = "z (m)";
  base.x_min = g.origin[2], base.x_max = g.origin[2] + (nx - 1) * g.spacing[2];
  base.y_min = g.origin[0], base.y_max = g.origin[0] + (nz - 1) * g.spacing[0];
  base.aspect = g.spacing[0] / g.spacing[2];
  base.min_pixels = 360;
  std::vector<io::ImagePanel> panels;
  for (std::size_t k = 0; k < slices.size(); ++k) {
    io::ImagePlot p = base;
    p.title = titles[k];
    p.colormap = io::Colormap::viridis;
    p.colorbar_label = units;
    p.value_min = lo, p.value_max = hi;
    panels.push_back({slices[k], nz, nx, p});
  }
  io::ImagePlot up = base;
  up.title = fmt::format("update: iteration {} - start", last_iteration);
  up.colormap = io::Colormap::seismic;
  up.clip_percentile = 100;
  up.colorbar_label = units;
  panels.push_back({update, nz, nx, up});
  io::write_image_panels_png(path.string(), panels,
                             fmt::format("{}: {} at y = {:.0f} m", c.name, what, g.origin[1] + y * g.spacing[1]));
}

}  // namespace

void InversionRecorder::write_plots() const {
  if (!case_.output.plots || history_.empty()) return;
  const fs::path dir(directory_);
  std::vector<double> x, relative, error, extra_error[2];
  for (const auto& it : history_) {
    x.push_back(it.iteration), relative.push_back(it.relative_misfit);
    if (it.model_error) error.push_back(*it.model_error / *history_.front().model_error);
    for (int k = 0; k < 2; ++k)
      if (it.*extra_[k].error_of)
        extra_error[k].push_back(*(it.*extra_[k].error_of) / *(history_.front().*extra_[k].error_of));
  }
  // A parameter that starts at its true value (error 0, or rounding: the density passes through the optimiser's
  // scaled vector) has no error relative to the start to plot.
  if (!history_.front().model_error || *history_.front().model_error < 1e-12) error.clear();
  for (int k = 0; k < 2; ++k)
    if (!(history_.front().*extra_[k].error_of) || *(history_.front().*extra_[k].error_of) < 1e-12)
      extra_error[k].clear();
  const bool several = extra_[0].on || extra_[1].on;
  std::vector<std::vector<double>> series = {relative};
  std::vector<std::string> names = {"misfit / start"};
  if (error.size() == x.size())
    series.push_back(error), names.push_back(several ? "velocity error / start" : "model error / start");
  for (int k = 0; k < 2; ++k)
    if (extra_error[k].size() == x.size())
      series.push_back(extra_error[k]), names.push_back(fmt::format("{} error / start", k == 0 ? "density" : "vs"));
  io::LinePlot lp{fmt::format("{}: {} inversion", case_.name, optimizer_), "iteration", "relative to start", true};
  lp.integer_x = true;
  io::write_line_png((dir / "misfit.png").string(), x, series, names, lp);
  const int last = history_.back().iteration;
  write_model_panels(case_, dir / "model_slices.png", velocities_, last, true_velocity_, "velocity", "m/s");
  for (const Extra& e : extra_)
    if (e.on) write_model_panels(case_, dir / e.plot, e.values, last, e.truth, label_of(e.name), e.units);
}

std::vector<std::string> InversionRecorder::outputs() const {
  std::vector<std::string> out;
  for (const char* f : {"inversion.h5", "iterations.jsonl", "inversion_iteration*.vtkhdf", "model_final.h5"})
    out.push_back((fs::path(directory_) / f).string());
  if (case_.output.plots)
    for (const char* f : {"misfit.png", "model_slices.png"}) out.push_back((fs::path(directory_) / f).string());
  for (const Extra& e : extra_)
    if (case_.output.plots && e.on) out.push_back((fs::path(directory_) / e.plot).string());
  return out;
}

void write_source_estimate(const Case& c, const std::vector<std::vector<double>>& wavelets,
                           const std::vector<double>& case_wavelet, double dt, double band_hz, int threads) {
  namespace fs = std::filesystem;
  const fs::path dir(c.output.directory);
  const hsize_t count = wavelets.size(), nt = wavelets.empty() ? 0 : wavelets.front().size();
  std::vector<double> flat;
  for (const auto& w : wavelets) flat.insert(flat.end(), w.begin(), w.end());
  io::h5::AtomicWriter file((dir / "source_estimate.h5").string());
  io::h5::write_root_attributes(file.id(),
                                {"specwave.source_estimate", "fp64", "cpu", c.source_text, "host CPU", threads, 1});
  auto d = io::h5::write_dataset<double>(file.id(), "wavelets", {count, nt}, flat.data(), "source amplitude");
  io::h5::write_attribute(d.id(), "dt", dt);
  io::h5::write_attribute(d.id(), "t0", 0.0);
  io::h5::write_attribute(d.id(), "estimate", c.inversion.source_estimation);
  io::h5::write_attribute(d.id(), "band_hz", band_hz);
  io::h5::write_attribute(d.id(), "damping", c.inversion.source_estimation_damping);
  io::h5::write_dataset<double>(file.id(), "case_wavelet", {hsize_t(case_wavelet.size())}, case_wavelet.data(),
                                "source amplitude");
  file.commit();
  if (!c.output.plots || nt == 0) return;
  std::vector<double> t(nt);
  for (hsize_t n = 0; n < nt; ++n) t[n] = double(n) * dt;
  std::vector<std::vector<double>> series = {case_wavelet};
  std::vector<std::string> names = {"case wavelet"};
  for (std::size_t k = 0; k < std::min<std::size_t>(wavelets.size(), 4); ++k) {
    series.push_back(wavelets[k]);
    names.push_back(wavelets.size() == 1 ? std::string("estimated (shared)") : fmt::format("estimated, shot {}", k));
  }
  io::write_line_png((dir / "source_estimate.png").string(), t, series, names,
                     {band_hz > 0 ? fmt::format("{}: source estimate for the {:.4g} Hz band", c.name, band_hz)
                                  : fmt::format("{}: source estimate", c.name),
                      "time (s)", "amplitude", false});
}

}  // namespace specwave
