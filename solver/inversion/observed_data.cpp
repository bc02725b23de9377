// The observed data of an inversion (docs/case-file.md, `observed`; docs/hdf5-schema.md, traces.h5): their layout
// and sampling against the case, the checks made before anything is written (geometry, time origin, values, the
// bands and the offset window), the trace weights, and the reading; declared in objective.hpp.
#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "io/hdf5.hpp"
#include "io/outputs.hpp"
#include "solver/case/errors.hpp"
#include "solver/inversion/objective.hpp"
#include "solver/plan/plan.hpp"
#include "solver/plan/resample.hpp"

namespace specwave {

namespace {
std::string shape_text(const std::vector<hsize_t>& dims) {
  std::string t;
  for (const hsize_t d : dims) t += (t.empty() ? "" : ", ") + std::to_string(d);
  return "(" + t + ")";
}
}  // namespace

// A data file's /receiver_component (traces.h5 schema 1.3: one a row of /receiver_coordinates; absent: every trace
// pressure) against the case's receiver components, trace by trace: velocity data fitted as pressure (or a vz row
// as vx) would be a wrong inversion that runs. `shared`: the (shots, receivers, samples) layout.
static void check_observed_components(const Case& c, const io::h5::Reader& reader, bool shared) {
  if (!reader.has_dataset("/receiver_component")) return;
  const auto info = reader.info("/receiver_component");
  std::vector<std::pair<std::size_t, std::size_t>> rows;  // (shot, receiver) of each row
  for (std::size_t s = 0; s < (shared ? 1 : c.shots.size()); ++s)
    for (std::size_t r = 0; r < shot_receivers(c, s).size(); ++r) rows.emplace_back(s, r);
  if (info.type_class != H5T_INTEGER || info.dims != std::vector<hsize_t>{rows.size()})
    throw Error(ExitCode::input_error, fmt::format("{}: dataset '/receiver_component' must hold {} integers, one a "
                                                   "trace row (docs/hdf5-schema.md)",
                                                   c.inversion.observed_file, rows.size()));
  std::vector<std::int32_t> codes(rows.size());
  io::h5::Handle d = reader.open_dataset("/receiver_component");
  if (H5Dread(d.id(), H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, codes.data()) < 0)
    throw Error(ExitCode::input_error,
                fmt::format("{}: cannot read dataset '/receiver_component'", c.inversion.observed_file));
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const auto [s, r] = rows[k];
    const ReceiverComponent want = shot_receiver_component(c, s, r);
    if (codes[k] != std::int32_t(want))
      throw Error(ExitCode::input_error,
                  fmt::format("{}: trace {} (shot {} receiver {}) records component code {} ('/receiver_component': 0 "
                              "p, 1 vz, 2 vy, 3 vx), the case's receiver records {}; give receivers.components in "
                              "the data's order",
                              c.inversion.observed_file, k, s, r, codes[k], to_string(want)));
  }
}

// The observed traces' layout against the case's receivers: (shots, receivers, samples) when every shot has that many
// receivers, or ragged (traces, samples) with /shot_first_trace giving each shot as many rows as it has receivers
// (docs/hdf5-schema.md). Returns the samples per trace; errors (input_error) name the file, dataset and shot.
static int observed_samples(const Case& c, const io::h5::Reader& reader) {
  const auto& inv = c.inversion;
  const auto info = reader.info(inv.observed_dataset);
  const std::string where = fmt::format("{}: dataset '{}'", inv.observed_file, inv.observed_dataset);
  const std::size_t n_shots = c.shots.size();
  const std::size_t first_count = shot_receivers(c, 0).size();
  bool same_count = true;
  for (std::size_t s = 0; s < n_shots; ++s) same_count = same_count && shot_receivers(c, s).size() == first_count;
  if (info.dims.size() == 3) {
    if (same_count && info.dims[0] == n_shots && info.dims[1] == first_count) {
      check_observed_components(c, reader, true);
      return int(info.dims[2]);
    }
    if (same_count)
      throw Error(ExitCode::input_error,
                  fmt::format("{} has shape {}, expected ({}, {}, samples): one trace per shot and receiver of the "
                              "case (shots x receivers x samples)",
                              where, shape_text(info.dims), n_shots, first_count));
    throw Error(ExitCode::input_error,
                fmt::format("{} has shape {}: the case's shots have different receiver counts ({} traces in all), so "
                            "the data must be ragged: (traces, samples) with /shot_first_trace (docs/hdf5-schema.md)",
                            where, shape_text(info.dims), total_traces(c)));
  }
  const auto first = io::read_shot_first_trace(reader);
  if (info.dims.size() != 2 || first.empty())
    throw Error(ExitCode::input_error,
                fmt::format("{} has shape {}; expected (shots, receivers, samples), or (traces, samples) with the "
                            "row offsets /shot_first_trace (docs/hdf5-schema.md)",
                            where, shape_text(info.dims)));
  if (first.size() != n_shots + 1)
    throw Error(ExitCode::input_error, fmt::format("{}: /shot_first_trace has {} entries, the case has {} shot(s) "
                                                   "(expected {} entries)",
                                                   inv.observed_file, first.size(), n_shots, n_shots + 1));
  for (std::size_t s = 0; s < n_shots; ++s)
    if (std::size_t(first[s + 1] - first[s]) != shot_receivers(c, s).size())
      throw Error(
          ExitCode::input_error,
          fmt::format("{}: shot {} has {} traces (rows {} to {}), the case gives it {} receivers; the data "
                      "must hold one trace per receiver of each shot, in the case's order",
                      where, s, first[s + 1] - first[s], first[s], first[s + 1] - 1, shot_receivers(c, s).size()));
  if (hsize_t(first.back()) != info.dims[0])
    throw Error(ExitCode::input_error,
                fmt::format("{} has {} rows, /shot_first_trace ends at {}", where, info.dims[0], first.back()));
  check_observed_components(c, reader, false);
  return int(info.dims[1]);
}

DataSampling observed_sampling(const Case& c, const Plan& plan) {
  const auto& inv = c.inversion;
  if (inv.observed_file.empty()) return {plan.nt, plan.dt};
  io::h5::Reader reader(inv.observed_file);
  const std::string where = fmt::format("{}: dataset '{}'", inv.observed_file, inv.observed_dataset);
  DataSampling d{observed_samples(c, reader), plan.dt};
  if (d.nt < 2)
    throw Error(ExitCode::input_error,
                fmt::format("{} holds {} sample(s) a trace; a trace needs at least 2 (the data's last axis is time)",
                            where, d.nt));
  io::h5::Handle dset = reader.open_dataset(inv.observed_dataset);
  // Sample n is at t0 + n dt (docs/hdf5-schema.md); the synthetics start at t = 0, the sources' time origin.
  if (io::h5::has_attribute(dset.id(), "t0")) {
    const auto t0 = io::h5::read_attribute_doubles(dset.id(), "t0");
    if (t0.size() != 1 || t0[0] != 0)
      throw Error(ExitCode::input_error,
                  fmt::format("{} has attribute t0 = {} s (the time of sample 0); specwave fits data whose sample 0 "
                              "is at t = 0, the sources' time origin: drop the first t0 / dt samples (or pad with "
                              "zeros for t0 < 0) and set t0 = 0",
                              where, t0.empty() ? NAN : t0[0]));
  }
  if (io::h5::has_attribute(dset.id(), "dt")) {
    const auto dt = io::h5::read_attribute_doubles(dset.id(), "dt");
    if (dt.size() != 1 || !(dt[0] > 0) || !std::isfinite(dt[0]))
      throw Error(ExitCode::input_error,
                  fmt::format("{} has attribute dt = {}; the sample interval must be one finite number > 0 (s)", where,
                              dt.empty() ? NAN : dt[0]));
    d.dt = dt[0];
    // Finer than a hundredth of the simulation's step is a unit slip (ms or us read as s): the synthetics hold
    // nothing above their own Nyquist frequency, and such data would span a sliver of the run.
    if (d.dt < plan.dt / 100)
      throw Error(ExitCode::input_error,
                  fmt::format("{} has attribute dt = {:.6g} s, more than 100 times finer than the simulation's dt = "
                              "{:.6g} s ({} samples span {:.6g} s of its {:.6g} s); give the sample interval in "
                              "seconds (e.g. 0.004 for 4 ms), or resample the data to an interval of at least {:.6g} s",
                              where, d.dt, plan.dt, d.nt, (d.nt - 1) * d.dt, (plan.nt - 1) * plan.dt, plan.dt / 100));
  } else if (d.nt != plan.nt) {
    throw Error(ExitCode::input_error,
                fmt::format("{} has {} samples and no dt attribute, the case runs {} steps; add the attribute dt (the "
                            "sample interval in s) so that the data can be resampled, or record nt = {} samples",
                            where, d.nt, plan.nt, plan.nt));
  }
  // Resampled data need the simulation to reach the interpolator's window beyond their last sample.
  const bool same = d.nt == plan.nt && std::abs(d.dt - plan.dt) <= 1e-9 * plan.dt;
  const double data_end = (d.nt - 1) * d.dt, simulation_end = (plan.nt - 1) * plan.dt;
  const double needed = data_end + (same ? 0.0 : TraceResampler::reach(plan.dt, d.dt));
  if (needed > simulation_end * (1 + 1e-9))
    throw Error(ExitCode::input_error,
                fmt::format("{} lasts {:.6g} s ({} samples of {:.6g} s); resampling the synthetic data to those times "
                            "needs the simulation to run {:.6g} s, it runs {:.6g} s; set time.duration >= {:.6g}",
                            where, data_end, d.nt, d.dt, needed, simulation_end, needed));
  return d;
}

std::unique_ptr<Misfit> on_data_sampling(const Case& c, const Plan& plan, std::unique_ptr<Misfit> inner) {
  const DataSampling d = observed_sampling(c, plan);
  if (d.nt == plan.nt && std::abs(d.dt - plan.dt) <= 1e-9 * plan.dt) return inner;
  return std::make_unique<ResampledMisfit>(std::move(inner), TraceResampler(plan.nt, plan.dt, d.nt, d.dt));
}

TraceWeights read_trace_weights(const Case& c) {
  const auto& inv = c.inversion;
  if (inv.trace_weights_file.empty()) return {};
  io::h5::Reader reader(inv.trace_weights_file);
  const std::string where = fmt::format("{}: dataset '{}'", inv.trace_weights_file, inv.trace_weights_dataset);
  const auto info = reader.info(inv.trace_weights_dataset);
  // (shots, receivers) when every shot has as many receivers; (traces) in the ragged layout's order otherwise.
  const std::size_t n_shots = c.shots.size(), count = shot_receivers(c, 0).size();
  bool same_count = true;
  for (std::size_t s = 0; s < n_shots; ++s) same_count = same_count && shot_receivers(c, s).size() == count;
  const bool rectangular = info.dims.size() == 2 && info.dims[0] == n_shots && info.dims[1] == count;
  const bool flat = info.dims.size() == 1 && info.dims[0] == total_traces(c);
  if (!(same_count ? rectangular : flat))
    throw Error(ExitCode::input_error,
                same_count ? fmt::format("{} (inversion.trace_weights) has shape {}, expected ({}, {}): one weight "
                                         "per shot and receiver of the case",
                                         where, shape_text(info.dims), n_shots, count)
                           : fmt::format("{} (inversion.trace_weights) has shape {}, expected ({}): the shots have "
                                         "their own receivers, so one weight per trace, shot by shot in the case's "
                                         "receiver order",
                                         where, shape_text(info.dims), total_traces(c)));
  const std::vector<double> all = reader.read_floating<double>(inv.trace_weights_dataset, info.dims);
  TraceWeights out(n_shots);
  bool any = false;
  std::size_t k = 0;
  for (std::size_t s = 0; s < n_shots; ++s) {
    out[s].resize(shot_receivers(c, s).size());
    for (std::size_t r = 0; r < out[s].size(); ++r, ++k) {
      const double w = all[k];
      if (!(w >= 0) || !std::isfinite(w))
        throw Error(ExitCode::input_error,
                    fmt::format("{} (inversion.trace_weights): the weight of shot {} receiver {} is {}; weights must "
                                "be finite numbers >= 0 (0 leaves the trace out)",
                                where, s, r, w));
      any = any || w > 0;
      out[s][r] = w;
    }
  }
  if (!any)
    throw Error(ExitCode::input_error,
                fmt::format("{} (inversion.trace_weights): every weight is 0, so there is nothing to fit; give the "
                            "traces to fit a weight > 0",
                            where));
  return out;
}

namespace {

// The data's /receiver_coordinates and /source_coordinates (with /source_shot), when the file has them, against the
// case's receivers and sources, to 1% of the smallest grid spacing (of the axes with more than one point): data of
// another acquisition, or in another order, would be fitted as this one's (a wrong inversion that runs).
// inversion.observed_geometry = "ignored" skips it (data in other coordinates). A case whose shots have receivers of
// their own with data in the shared layout: its one row a receiver says nothing of the other shots, not compared.
void check_observed_geometry(const Case& c, const io::h5::Reader& reader) {
  const auto& inv = c.inversion;
  if (!inv.observed_geometry_checked) return;
  double tolerance = INFINITY;
  for (int a = 0; a < 3; ++a)
    if (c.grid.shape[a] > 1) tolerance = std::min(tolerance, 0.01 * c.grid.spacing[a]);
  const auto far = [&](const Vec3& a, const double* b) {
    return !(std::abs(a[0] - b[0]) <= tolerance && std::abs(a[1] - b[1]) <= tolerance &&
             std::abs(a[2] - b[2]) <= tolerance);
  };
  const auto read_points = [&](const std::string& name, std::size_t rows) {
    const auto info = reader.info(name);
    if (info.dims != std::vector<hsize_t>{rows, 3})
      throw Error(ExitCode::input_error,
                  fmt::format("{}: dataset '{}' has shape {}, expected ({}, 3) for the case's acquisition; the data "
                              "belong to another acquisition (or remove the dataset to fit them without the check)",
                              inv.observed_file, name, shape_text(info.dims), rows));
    return reader.read_floating<double>(name, info.dims);
  };
  const bool ragged = reader.has_dataset("/shot_first_trace");
  bool own_receivers = false;
  for (const auto& shot : c.shots) own_receivers = own_receivers || !shot.receivers.empty();
  if (reader.has_dataset("/receiver_coordinates") && (ragged || !own_receivers)) {
    std::vector<std::pair<std::size_t, std::size_t>> rows;  // (shot, receiver) of each row
    for (std::size_t s = 0; s < (ragged ? c.shots.size() : 1); ++s)
      for (std::size_t r = 0; r < shot_receivers(c, s).size(); ++r) rows.emplace_back(s, r);
    const std::vector<double> xyz = read_points("/receiver_coordinates", rows.size());
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const auto [s, r] = rows[k];
      const Vec3& want = shot_receivers(c, s)[r];
      if (far(want, &xyz[3 * k]))
        throw Error(ExitCode::input_error,
                    fmt::format("{}: '/receiver_coordinates' row {} (shot {} receiver {}) is at (z, y, x) = ({}, {}, "
                                "{}) m, the case's receiver at ({}, {}, {}) m (limit {:g} m: 1% of the smallest grid "
                                "spacing); the data belong to another acquisition or order: give the case the data's "
                                "receivers (receivers.file = the data file takes its geometry), or set "
                                "inversion.observed_geometry = \"ignored\" for data in other coordinates",
                                inv.observed_file, k, s, r, xyz[3 * k], xyz[3 * k + 1], xyz[3 * k + 2], want[0],
                                want[1], want[2], tolerance));
    }
  }
  if (reader.has_dataset("/source_coordinates") && reader.has_dataset("/source_shot")) {
    const auto shot_info = reader.info("/source_shot");
    if (shot_info.dims.size() != 1 || shot_info.type_class != H5T_INTEGER)
      throw Error(ExitCode::input_error,
                  fmt::format("{}: dataset '/source_shot' must hold one integer a source", inv.observed_file));
    std::vector<std::int64_t> shot_of(shot_info.dims[0]);
    const io::h5::Handle d = reader.open_dataset("/source_shot");
    if (H5Dread(d.id(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, shot_of.data()) < 0)
      throw Error(ExitCode::input_error, fmt::format("{}: cannot read dataset '/source_shot'", inv.observed_file));
    const std::vector<double> xyz = read_points("/source_coordinates", shot_of.size());
    std::vector<std::size_t> seen(c.shots.size(), 0);
    for (std::size_t j = 0; j < shot_of.size(); ++j) {
      const std::int64_t s = shot_of[j];
      if (s < 0 || std::size_t(s) >= c.shots.size() || seen[std::size_t(s)] >= c.shots[std::size_t(s)].sources.size())
        throw Error(ExitCode::input_error,
                    fmt::format("{}: source {} belongs to shot {} ('/source_shot'), which the case does not have with "
                                "that many sources ({} shot(s)); the data belong to another acquisition",
                                inv.observed_file, j, s, c.shots.size()));
      const Vec3& want = c.shots[std::size_t(s)].sources[seen[std::size_t(s)]++].position;
      if (far(want, &xyz[3 * j]))
        throw Error(ExitCode::input_error,
                    fmt::format("{}: '/source_coordinates' row {} (shot {}) is at (z, y, x) = ({}, {}, {}) m, the "
                                "case's source at ({}, {}, {}) m (limit {:g} m: 1% of the smallest grid spacing); the "
                                "data belong to another shot order or acquisition: give the case the data's sources, "
                                "or set inversion.observed_geometry = \"ignored\" for data in other coordinates",
                                inv.observed_file, j, s, xyz[3 * j], xyz[3 * j + 1], xyz[3 * j + 2], want[0], want[1],
                                want[2], tolerance));
    }
  }
}

// The first sample of `values` (traces `first_trace` on, nt each) that is not finite, as an error naming its trace and
// time.
void check_observed_values(const Case& c, std::span<const double> values, const DataSampling& d,
                           std::size_t first_trace = 0) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i])) {
      const std::size_t trace = first_trace + i / std::size_t(d.nt), n = i % std::size_t(d.nt);
      throw Error(ExitCode::input_error,
                  fmt::format("{}: dataset '{}': trace {} (counting from 0 over the shots) sample {} (t = {:g} s) is "
                              "{}; the data must be finite: repair or zero that sample, or give the trace a weight "
                              "of 0 and a finite value",
                              c.inversion.observed_file, c.inversion.observed_dataset, trace, n, n * d.dt, values[i]));
    }
}

}  // namespace

void check_band(const Case& c, const Plan& plan, double band_hz, const std::string& what) {
  if (band_hz <= 0) return;
  const DataSampling d = observed_sampling(c, plan);
  // The low-pass filters each trace zero-padded to 2 nt samples: its lowest frequency after the mean is
  // 1 / (2 nt dt), which a cutoff passes in part from 1 / 1.5 of it (the taper reaches 1.5 cutoffs). A cutoff at or
  // above the Nyquist frequency filters nothing (a multiscale inversion's last, full band).
  const double nyquist = 0.5 / d.dt, lowest = 1.0 / (2.0 * d.nt * d.dt) / 1.5;
  if (band_hz < lowest)
    throw Error(
        ExitCode::invalid_case,
        fmt::format("{}: {} = {:g} Hz is below {:g} Hz, where the low-pass over the data's {} samples of {:g} "
                    "s passes only each trace's mean (its lowest frequency 1 / (2 nt dt) = {:g} Hz, its taper "
                    "1.5 cutoffs wide); give a cutoff of at least {:g} Hz (at or above their Nyquist frequency, "
                    "{:g} Hz, nothing is filtered)",
                    c.label(), what, band_hz, lowest, d.nt, d.dt, 1.5 * lowest, lowest, nyquist));
}

void check_observed(const Case& c, const Plan& plan) {
  const auto& inv = c.inversion;
  if (!inv.observed_file.empty() && !inv.true_model) {
    const DataSampling d = observed_sampling(c, plan);  // shape, dt, t0, duration
    io::h5::Reader reader(inv.observed_file);
    check_observed_geometry(c, reader);
    // The values, a shot at a time (the layouts hold the shots' traces one after the other).
    const auto info = reader.info(inv.observed_dataset);
    std::size_t first = 0;
    for (std::size_t s = 0; s < c.shots.size(); ++s) {
      const std::size_t n = shot_receivers(c, s).size();
      const std::vector<double> shot =
          info.dims.size() == 3
              ? reader.read_floating_block<double>(inv.observed_dataset, info.dims, {hsize_t(s), 0, 0},
                                                   {1, info.dims[1], info.dims[2]})
              : reader.read_floating_block<double>(inv.observed_dataset, info.dims, {hsize_t(first), 0},
                                                   {hsize_t(n), info.dims[1]});
      check_observed_values(c, shot, d, first);
      first += n;
    }
  }
  for (const double band : inv.bands_hz) check_band(c, plan, band, "inversion.bands_hz");
  // The offset window and the top mute must leave a trace, and a sample of it, to fit.
  if (inv.windowed()) {
    const DataSampling d = observed_sampling(c, plan);
    const double data_end = (d.nt - 1) * d.dt;
    bool in_window = false;
    double earliest_mute = std::numeric_limits<double>::infinity();
    for (std::size_t s = 0; s < c.shots.size(); ++s) {
      const Vec3 src = c.shots[s].sources.at(0).position;
      for (const Vec3& r : shot_receivers(c, s)) {
        const double dz = r[0] - src[0], dy = r[1] - src[1], dx = r[2] - src[2];
        const double offset = std::sqrt(dy * dy + dx * dx);  // as the misfit's window (case_misfit)
        if (offset < inv.offset_min || (inv.offset_max && offset > *inv.offset_max)) continue;
        in_window = true;
        earliest_mute =
            std::min(earliest_mute, inv.mute_velocity
                                        ? std::sqrt(dz * dz + dy * dy + dx * dx) / *inv.mute_velocity + inv.mute_time
                                        : -std::numeric_limits<double>::infinity());
      }
    }
    if (in_window && !(earliest_mute > data_end)) return;  // (at data_end itself, one sample may pass)
    if (in_window)
      throw Error(ExitCode::invalid_case,
                  fmt::format("{}: inversion.mute_velocity = {:g} m/s and mute_time = {:g} s mute every sample of "
                              "every trace (the earliest trace's mute starts at {:g} s, the data end at {:g} s); give "
                              "the first arrivals' velocity in m/s and a mute_time (s) inside the record",
                              c.label(), *inv.mute_velocity, inv.mute_time, earliest_mute, data_end));
    throw Error(ExitCode::invalid_case,
                fmt::format("{}: inversion.offset_min = {:g} m{} leaves no trace of any shot to fit (each trace's "
                            "horizontal offset from its shot's first source is outside); widen the window",
                            c.label(), inv.offset_min,
                            inv.offset_max ? fmt::format(" and offset_max = {:g} m", *inv.offset_max) : ""));
  }
}

ObservedData read_observed(const Case& c, const Plan& plan) {
  const auto& inv = c.inversion;
  const DataSampling d = observed_sampling(c, plan);
  io::h5::Reader reader(inv.observed_file);
  const auto info = reader.info(inv.observed_dataset);
  const std::vector<double> all = reader.read_floating<double>(inv.observed_dataset, info.dims);
  check_observed_values(c, all, d);
  ObservedData out(c.shots.size());
  std::size_t begin = 0;  // both layouts hold the shots' traces one after the other
  for (std::size_t s = 0; s < out.size(); ++s) {
    const std::size_t values = shot_receivers(c, s).size() * std::size_t(d.nt);
    out[s].assign(all.begin() + std::ptrdiff_t(begin), all.begin() + std::ptrdiff_t(begin + values));
    begin += values;
  }
  return out;
}

}  // namespace specwave
