#include "solver/inversion/inversion_checkpoint.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <filesystem>

#include "io/checksum.hpp"
#include "io/hdf5.hpp"
#include "solver/case/errors.hpp"

namespace specwave {
namespace {

using optim::Vector;
// iteration, misfit, relative, step, evaluations, wolfe, |g|, seconds, model error, band (Hz; NaN: none)
constexpr int history_columns = 10;

void write_vector(hid_t file, const std::string& name, const Vector& v) {
  if (v.size() > 0) io::h5::write_checked_doubles(file, name, {hsize_t(v.size())}, v.data(), "parameter units");
}

void write_pairs(hid_t file, const std::string& name, const std::vector<Vector>& pairs, std::size_t n) {
  if (pairs.empty()) return;
  std::vector<double> all;
  for (const auto& p : pairs) all.insert(all.end(), p.data(), p.data() + p.size());
  io::h5::write_checked_doubles(file, name, {hsize_t(pairs.size()), hsize_t(n)}, all.data(), "parameter units");
}

Vector read_vector(const io::h5::Reader& r, const std::string& name, std::size_t n) {
  if (!r.has_dataset(name)) return {};
  const auto v = io::h5::read_checked_doubles(r, name, {hsize_t(n)});
  return Eigen::Map<const Vector>(v.data(), Eigen::Index(n));
}

std::vector<Vector> read_pairs(const io::h5::Reader& r, const std::string& name, std::size_t n) {
  if (!r.has_dataset(name)) return {};
  const hsize_t m = r.info(name).dims.at(0);
  const auto all = io::h5::read_checked_doubles(r, name, {m, hsize_t(n)});
  std::vector<Vector> out;
  for (hsize_t k = 0; k < m; ++k) out.push_back(Eigen::Map<const Vector>(all.data() + k * n, Eigen::Index(n)));
  return out;
}

// The scalar attributes as one text, for their checksum (every digit of the doubles).
std::string scalar_text(const InversionCheckpoint& c) {
  const auto& s = c.state;
  return fmt::format(
      "optimizer={};fingerprint={};iteration={};band={};offset={};misfit0={:a};misfit={:a};step={:a};"
      "slope={:a}",
      c.optimizer, c.fingerprint, s.iteration, c.band, c.offset, c.band_misfit0, s.current.value, s.previous_step,
      s.previous_slope);
}

}  // namespace

void write_inversion_checkpoint(const std::string& path, const InversionCheckpoint& c) {
  const auto& s = c.state;
  const std::size_t n = std::size_t(s.x.size());
  io::h5::AtomicWriter file(path);
  io::h5::write_root_attributes(file.id(), {"specwave.inversion_state", "fp64", "cpu", c.case_text, "host CPU", 0, 1});
  io::h5::write_attribute(file.id(), "optimizer", c.optimizer);
  io::h5::write_attribute(file.id(), "fingerprint", c.fingerprint);
  io::h5::write_attribute(file.id(), "iteration", std::int64_t(s.iteration));
  io::h5::write_attribute(file.id(), "band", std::int64_t(c.band));
  io::h5::write_attribute(file.id(), "band_offset", std::int64_t(c.offset));
  io::h5::write_attribute(file.id(), "band_misfit0", c.band_misfit0);
  io::h5::write_attribute(file.id(), "misfit", s.current.value);
  io::h5::write_attribute(file.id(), "previous_step", s.previous_step);
  io::h5::write_attribute(file.id(), "previous_slope", s.previous_slope);
  write_vector(file.id(), "x", s.x);
  write_vector(file.id(), "gradient", s.current.gradient);
  write_pairs(file.id(), "lbfgs_s", s.lbfgs_s, n);
  write_pairs(file.id(), "lbfgs_y", s.lbfgs_y, n);
  write_vector(file.id(), "previous_direction", s.previous_direction);
  write_vector(file.id(), "previous_gradient", s.previous_gradient);
  write_vector(file.id(), "previous_preconditioned", s.previous_preconditioned);
  if (!c.illumination.empty())
    io::h5::write_checked_doubles(file.id(), "illumination", {hsize_t(c.illumination.size())}, c.illumination.data(),
                                  "sum of squared pressure (Pa^2)");
  if (!c.source_filters.empty())
    io::h5::write_checked_doubles(file.id(), "source_filters", {hsize_t(c.source_filters.size())},
                                  c.source_filters.data(), "");
  std::vector<double> table;
  for (const auto& it : c.history)
    table.insert(table.end(), {double(it.iteration), it.misfit, it.relative_misfit, it.step, double(it.evaluations),
                               it.wolfe ? 1.0 : 0.0, it.gradient_norm, it.seconds, it.model_error.value_or(NAN),
                               it.band_hz.value_or(NAN)});
  io::h5::write_checked_doubles(file.id(), "history", {hsize_t(c.history.size()), hsize_t(history_columns)},
                                table.data(),
                                "iteration, misfit, relative_misfit, step, evaluations, wolfe, gradient_norm, seconds, "
                                "model_error, band_hz");
  // The misfit of every shot at every recorded iteration, (rows, shots).
  // (NaN where not known: rows resumed from the state of an older specwave.)
  std::size_t shots = 0;
  for (const auto& it : c.history) shots = std::max(shots, it.misfit_per_shot.size());
  std::vector<double> per_shot;
  for (const auto& it : c.history) {
    per_shot.insert(per_shot.end(), it.misfit_per_shot.begin(), it.misfit_per_shot.end());
    per_shot.insert(per_shot.end(), shots - it.misfit_per_shot.size(), NAN);
  }
  io::h5::write_checked_doubles(file.id(), "history_misfit_per_shot", {hsize_t(c.history.size()), hsize_t(shots)},
                                per_shot.data(), "misfit of each shot");
  // An inversion of the density with a known true density: its model error at every recorded iteration.
  // (And the same for the shear velocity.)
  for (const auto& [name, error] : {std::pair{"history_density_error", &InversionIteration::density_error},
                                    std::pair{"history_shear_error", &InversionIteration::shear_error}}) {
    if (c.history.empty() || !(c.history.front().*error)) continue;
    std::vector<double> errors;
    for (const auto& it : c.history) errors.push_back((it.*error).value_or(NAN));
    io::h5::write_checked_doubles(file.id(), name, {hsize_t(errors.size())}, errors.data(), "1");
  }
  // The scalars too: one checksum over their text.
  const std::string scalars = scalar_text(c);
  io::h5::write_attribute(file.id(), "scalars_checksum64",
                          io::checksum_hex(io::checksum64(scalars.data(), scalars.size())));
  file.commit();
}

InversionCheckpoint read_inversion_checkpoint(const std::string& path, std::size_t n, std::size_t points) {
  if (!std::filesystem::exists(path))
    throw Error(ExitCode::input_error,
                fmt::format("{}: no inversion state to resume from (written after every completed "
                            "iteration); run without --resume, or point --output-dir at the "
                            "interrupted run's directory",
                            path));
  io::h5::Reader r(path);
  InversionCheckpoint c;
  auto& s = c.state;
  c.optimizer = io::h5::read_attribute_string(r.id(), "optimizer");
  c.case_text = io::h5::read_attribute_string(r.id(), "case_text");
  c.fingerprint = io::h5::has_attribute(r.id(), "fingerprint") ? io::h5::read_attribute_string(r.id(), "fingerprint")
                                                               : std::string("(none)");
  s.iteration = int(io::h5::read_attribute_doubles(r.id(), "iteration").at(0));
  c.band = int(io::h5::read_attribute_doubles(r.id(), "band").at(0));
  c.offset = int(io::h5::read_attribute_doubles(r.id(), "band_offset").at(0));
  c.band_misfit0 = io::h5::read_attribute_doubles(r.id(), "band_misfit0").at(0);
  s.current.value = io::h5::read_attribute_doubles(r.id(), "misfit").at(0);
  s.previous_step = io::h5::read_attribute_doubles(r.id(), "previous_step").at(0);
  s.previous_slope = io::h5::read_attribute_doubles(r.id(), "previous_slope").at(0);
  s.x = read_vector(r, "x", n);
  s.current.gradient = read_vector(r, "gradient", n);
  s.lbfgs_s = read_pairs(r, "lbfgs_s", n);
  s.lbfgs_y = read_pairs(r, "lbfgs_y", n);
  s.previous_direction = read_vector(r, "previous_direction", n);
  s.previous_gradient = read_vector(r, "previous_gradient", n);
  s.previous_preconditioned = read_vector(r, "previous_preconditioned", n);
  if (r.has_dataset("illumination"))  // one value a grid point, whatever the vector holds (velocity and density: 2)
    c.illumination = io::h5::read_checked_doubles(r, "illumination", {hsize_t(points ? points : n)});
  if (r.has_dataset("source_filters"))
    c.source_filters = io::h5::read_checked_doubles(r, "source_filters", {r.info("source_filters").dims.at(0)});
  const hsize_t rows = r.info("history").dims.at(0);
  const auto table = io::h5::read_checked_doubles(r, "history", {rows, hsize_t(history_columns)});
  for (hsize_t k = 0; k < rows; ++k) {
    const double* row = table.data() + k * history_columns;
    InversionIteration it;
    it.iteration = int(row[0]), it.misfit = row[1], it.relative_misfit = row[2], it.step = row[3];
    it.evaluations = int(row[4]), it.wolfe = row[5] != 0, it.gradient_norm = row[6], it.seconds = row[7];
    if (!std::isnan(row[8])) it.model_error = row[8];
    if (!std::isnan(row[9])) it.band_hz = row[9];
    c.history.push_back(it);
  }
  if (r.has_dataset("history_misfit_per_shot")) {
    const hsize_t shots = r.info("history_misfit_per_shot").dims.at(1);
    const auto per_shot = io::h5::read_checked_doubles(r, "history_misfit_per_shot", {rows, shots});
    for (hsize_t k = 0; k < rows; ++k)
      c.history[k].misfit_per_shot.assign(per_shot.begin() + std::ptrdiff_t(k * shots),
                                          per_shot.begin() + std::ptrdiff_t((k + 1) * shots));
  }
  for (const auto& [name, error] : {std::pair{"history_density_error", &InversionIteration::density_error},
                                    std::pair{"history_shear_error", &InversionIteration::shear_error}}) {
    if (!r.has_dataset(name)) continue;
    const auto errors = io::h5::read_checked_doubles(r, name, {rows});
    for (hsize_t k = 0; k < rows; ++k)
      if (!std::isnan(errors[k])) c.history[k].*error = errors[k];
  }
  const std::string scalars = scalar_text(c);
  if (!io::h5::has_attribute(r.id(), "scalars_checksum64") ||
      io::h5::read_attribute_string(r.id(), "scalars_checksum64") !=
          io::checksum_hex(io::checksum64(scalars.data(), scalars.size())))
    throw Error(ExitCode::input_error,
                path +
                    ": the state's scalars (iteration, band, misfit, steps) fail their checksum (or have none): the "
                    "file is corrupt or was written by an older specwave; start again without --resume");
  if (s.x.size() != Eigen::Index(n) || int(rows) != c.offset + s.iteration + 1)
    throw Error(ExitCode::input_error,
                fmt::format("{}: the inversion state does not match this case ({} parameters, {} "
                            "iterations recorded); resume with the case of the interrupted run",
                            path, s.x.size(), rows));
  return c;
}

}  // namespace specwave
