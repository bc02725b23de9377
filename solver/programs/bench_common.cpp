#include "solver/programs/bench_common.hpp"

#include <omp.h>

#include <fmt/format.h>
#include <algorithm>
#include <ctime>
#include <fstream>
#include <set>
#include <stdexcept>
#include <utility>

namespace specwave::bench {
namespace {

template <class Kernel>
void time_stream(StreamResult& r, std::size_t n, int repetitions, Kernel&& kernel) {
  std::vector<double> seconds;
  kernel();  // warm-up (not timed)
  for (int rep = 0; rep < repetitions; ++rep) {
    const double t0 = omp_get_wtime();
    kernel();
    seconds.push_back(omp_get_wtime() - t0);
  }
  const double bytes = double(r.bytes_per_element) * double(n);
  r.best_gbs = bytes / best(seconds) * 1e-9;
  r.median_gbs = bytes / median(seconds) * 1e-9;
}

}  // namespace

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

double best(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  const auto e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

Machine describe_machine() {
  Machine m;
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  std::set<std::pair<std::string, std::string>> core_ids;
  std::set<std::string> socket_ids;
  std::string physical = "0", family, model;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
    if (key == "model name" && m.cpu == "unknown") m.cpu = value;
    if (key == "cpu family" && family.empty()) family = value;
    if (key == "model" && model.empty()) model = value;
    if (key == "processor") ++m.logical;
    if (key == "physical id") {
      physical = value;
      socket_ids.insert(value);
    }
    if (key == "core id") core_ids.insert({physical, value});
    if (key == "flags" && m.hypervisor.empty())
      m.hypervisor = (" " + value + " ").find(" hypervisor ") != std::string::npos ? "yes" : "no";
  }
  if (!family.empty()) m.cpu += fmt::format(" (family {}, model {})", family, model);
  m.cores = core_ids.empty() ? m.logical : int(core_ids.size());
  m.sockets = socket_ids.empty() ? 1 : int(socket_ids.size());
  // Caches of cpu0 (sizes are per instance).
  std::vector<std::string> parts;
  for (int i = 0; i < 8; ++i) {
    const std::string dir = fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/", i);
    std::ifstream level(dir + "level"), type(dir + "type"), size(dir + "size"), shared(dir + "shared_cpu_list");
    std::string l, t, s, sh;
    if (!(level >> l) || !(type >> t) || !(size >> s)) continue;
    if (t == "Instruction") continue;
    shared >> sh;
    parts.push_back(fmt::format("L{}{} {} (shared by cpus {})", l, t == "Data" ? "d" : "", s, sh));
  }
  for (std::size_t i = 0; i < parts.size(); ++i) m.caches += (i ? ", " : "") + parts[i];
  if (m.caches.empty()) m.caches = "unknown";
  return m;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buffer[64];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&t));
  return buffer;
}

StreamResults run_stream(std::size_t n, int repetitions) {
  StreamResults out;
  out.elements = n;
  out.repetitions = repetitions;
  auto a_buf = allocate<double>(n), b_buf = allocate<double>(n), c_buf = allocate<double>(n);
  double* __restrict a = a_buf.get();
  double* __restrict b = b_buf.get();
  double* __restrict c = c_buf.get();
  const std::int64_t size = std::int64_t(n);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < size; ++i) {
    a[i] = 1.0;
    b[i] = 2.0;
    c[i] = 0.0;
  }
  const double s = 3.0;
  time_stream(out.copy, n, repetitions, [&] {
#pragma omp parallel for simd schedule(static)
    for (std::int64_t i = 0; i < size; ++i) c[i] = a[i];
  });
  time_stream(out.triad, n, repetitions, [&] {
#pragma omp parallel for simd schedule(static)
    for (std::int64_t i = 0; i < size; ++i) a[i] = b[i] + s * c[i];
  });
  // The memory pattern of the FDTD update without its stencil: 3 streams read, one of them written in place.
  time_stream(out.update, n, repetitions, [&] {
#pragma omp parallel for simd schedule(static)
    for (std::int64_t i = 0; i < size; ++i) a[i] = 2.0 * b[i] - a[i] + c[i] * b[i];
  });
  // Check the results (and keep the compiler from dropping the loops): c = 1, a alternates 5 -> 1 -> 5 ...
  const double a_expected = (repetitions + 1) % 2 == 1 ? 1.0 : 5.0;
  for (std::int64_t i = 0; i < size; i += size / 97 + 1)
    if (c[i] != 1.0 || a[i] != a_expected) throw std::runtime_error("stream kernels produced a wrong result");
  return out;
}

}  // namespace specwave::bench
