// Source wavelets: Ricker, HDF5 wavelets (with resampling), and the highest significant frequency.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "io/hdf5.hpp"
#include "solver/case/errors.hpp"
#include "solver/plan/wavelet.hpp"

using namespace specwave;
namespace fs = std::filesystem;

TEST_CASE("Ricker: unit peak at the delay, zero mean, f_max about 2.4 f_peak") {
  CHECK(ricker(0.1, 15, 0.1) == doctest::Approx(1.0));
  WaveletSpec w;
  w.peak_frequency = 20;
  const double dt = 5e-4;
  const auto s = sample_wavelet(w, dt, 2000);
  double sum = 0;
  for (double v : s) sum += v;
  CHECK(std::abs(sum * dt) < 1e-9);
  // |S(f)| ~ (f/fp)^2 exp(-(f/fp)^2): 5% of the peak at f/fp = 2.40 (root of x^2 e^{1-x^2} = 0.05).
  CHECK(highest_significant_frequency(s, dt) == doctest::Approx(2.40 * 20).epsilon(0.02));
}

TEST_CASE("a wavelet from HDF5 is read, checked and resampled to the simulation's dt") {
  const fs::path dir = fs::temp_directory_path() / "specwave_test_wavelet";
  fs::create_directories(dir);
  const double dt_file = 2e-4, f = 12, t0 = 0.1;
  std::vector<double> samples(2000);
  for (std::size_t n = 0; n < samples.size(); ++n) samples[n] = ricker(n * dt_file, f, t0);
  {
    io::h5::AtomicWriter w((dir / "w.h5").string());
    auto d = io::h5::write_dataset<double>(w.id(), "wavelet", {samples.size()}, samples.data(), "1");
    io::h5::write_attribute(d.id(), "dt", dt_file);
    d.close();
    io::h5::write_dataset<double>(w.id(), "no_dt", {samples.size()}, samples.data(), "1");
    io::h5::write_dataset<double>(w.id(), "two_d", {2, 1000}, samples.data(), "1");
    w.commit();
  }
  WaveletSpec spec;
  spec.kind = WaveletSpec::Kind::file;
  spec.file = (dir / "w.h5").string();
  spec.amplitude = 2;
  // Same dt: the samples themselves.
  auto same = sample_wavelet(spec, dt_file, 500);
  CHECK(same[300] == doctest::Approx(2 * samples[300]));
  // Another dt (not a multiple): windowed-sinc resampling of a well-sampled signal.
  const double dt = 7.3e-4;
  auto resampled = sample_wavelet(spec, dt, 500);
  double worst = 0;
  for (int n = 0; n < 500; ++n) worst = std::max(worst, std::abs(resampled[n] - 2 * ricker(n * dt, f, t0)));
  CHECK(worst < 1e-3);
  // A file sampled near the run's dt (0.9 and 1.1 of it): the trace resampler's Kaiser kernel, normalised, gives
  // 5.7e-7 and 1.2e-6 of the peak (the Lanczos kernel used until 2026-12-07: 1.9e-4 and 4.2e-4, a gain of 1 + 1.6e-4).
  for (const double ratio : {0.9, 1.1}) {
    CAPTURE(ratio);
    const double run_dt = 1e-3, file_dt = ratio * run_dt, f10 = 10, delay = 0.15;
    std::vector<double> fine(1000);
    for (std::size_t n = 0; n < fine.size(); ++n) fine[n] = ricker(n * file_dt, f10, delay);
    const std::string path = (dir / "near.h5").string();
    {
      io::h5::AtomicWriter w(path);
      auto d = io::h5::write_dataset<double>(w.id(), "wavelet", {fine.size()}, fine.data(), "1");
      io::h5::write_attribute(d.id(), "dt", file_dt);
      d.close();
      w.commit();
    }
    WaveletSpec near;
    near.kind = WaveletSpec::Kind::file;
    near.file = path;
    const auto run = sample_wavelet(near, run_dt, 600);
    double error = 0, dot = 0, norm = 0;
    for (int n = 0; n < 600; ++n) {
      const double exact = ricker(n * run_dt, f10, delay);
      error = std::max(error, std::abs(run[n] - exact));
      dot += run[n] * exact, norm += exact * exact;
    }
    MESSAGE("file dt / run dt = " << ratio << ": largest error " << error << ", gain " << dot / norm);
    CHECK(error < 5e-6);
    CHECK(std::abs(dot / norm - 1) < 1e-6);
  }
  spec.dataset = "/no_dt";
  CHECK_THROWS_WITH_AS(sample_wavelet(spec, dt, 10), doctest::Contains("attribute 'dt'"), Error);
  spec.dataset = "/two_d";
  CHECK_THROWS_WITH_AS(sample_wavelet(spec, dt, 10), doctest::Contains("1-D"), Error);
  fs::remove_all(dir);
}

TEST_CASE("a wavelet file is read only as far as the run's times reach") {
  const fs::path dir = fs::temp_directory_path() / "specwave_test_wavelet_reach";
  fs::create_directories(dir);
  const double dt_file = 2e-4, f = 12, t0 = 0.1;
  std::vector<double> samples(5000), poisoned(5000), late(5000, 0.0);
  for (std::size_t n = 0; n < samples.size(); ++n) samples[n] = ricker(n * dt_file, f, t0);
  // The same samples, NaN from 500 on: a run of 100 steps of 7.3e-4 s reaches sample 361 plus the kernel's 44.
  for (std::size_t n = 0; n < samples.size(); ++n) poisoned[n] = n < 500 ? samples[n] : std::nan("");
  for (std::size_t n = 1000; n < late.size(); ++n) late[n] = samples[n - 1000];  // nothing before 0.2 s
  const std::string path = (dir / "w.h5").string();
  {
    io::h5::AtomicWriter w(path);
    for (const auto& [name, v] :
         {std::pair{"whole", &samples}, std::pair{"poisoned", &poisoned}, std::pair{"late", &late}}) {
      auto d = io::h5::write_dataset<double>(w.id(), name, {v->size()}, v->data(), "1");
      io::h5::write_attribute(d.id(), "dt", dt_file);
    }
    // 2e7 samples of 1 ns, never written (chunked: the file stays small, the values read as 0).
    const hsize_t n = 20'000'000, chunk = 1 << 16;
    io::h5::Handle space(H5Screate_simple(1, &n, nullptr));
    io::h5::Handle dcpl(H5Pcreate(H5P_DATASET_CREATE));
    H5Pset_chunk(dcpl.id(), 1, &chunk);
    io::h5::Handle d(H5Dcreate2(w.id(), "fine", H5T_NATIVE_FLOAT, space.id(), H5P_DEFAULT, dcpl.id(), H5P_DEFAULT));
    io::h5::write_attribute(d.id(), "dt", 1e-9);
    d.close();
    w.commit();
  }
  WaveletSpec spec;
  spec.kind = WaveletSpec::Kind::file;
  spec.file = path;
  spec.dataset = "/whole";
  const auto whole = sample_wavelet(spec, 7.3e-4, 100);
  spec.dataset = "/poisoned";
  CHECK(sample_wavelet(spec, 7.3e-4, 100) == whole);  // the same values, the NaN never read
  CHECK_THROWS_WITH_AS(sample_wavelet(spec, 7.3e-4, 200), doctest::Contains("contains NaN or Inf"), Error);
  spec.dataset = "/late";
  CHECK_THROWS_WITH_AS(sample_wavelet(spec, dt_file, 100),
                       doctest::Contains("every sample within the run's time (100 of 5000) is zero"), Error);
  CHECK(sample_wavelet(spec, dt_file, 1600)[1000 + 500] == samples[500]);
  spec.dataset = "/fine";
  CHECK_THROWS_WITH_AS(
      sample_wavelet(spec, 1e-3, 100),
      doctest::Contains("reach 20000000 of its samples (dt = 1e-09 s), more than the limit of 10000000"), Error);
  fs::remove_all(dir);
}
