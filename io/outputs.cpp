#include "io/outputs.hpp"

#include <fmt/format.h>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <tuple>

#include "io/file_kind.hpp"
#include "io/vtkhdf.hpp"
#include "solver/case/errors.hpp"

namespace specwave::io {
namespace {

std::string shot_group(int shot) { return fmt::format("shot_{:04d}", shot); }

// A dataset of the partial file an interrupted run left (h5::Resumable).
h5::Handle open_existing(hid_t file, const std::string& name, const std::string& path) {
  h5::Handle d(H5Dopen2(file, name.c_str(), H5P_DEFAULT));
  if (!d)
    throw Error(ExitCode::output_error,
                fmt::format("{}.partial has no dataset {}: it was not written by this case; start "
                            "the run again without --resume",
                            path, name));
  return d;
}

// XDMF 3 description of 3-D datasets on the case's grid (ParaView: open the .xdmf with the Xdmf3 reader).
struct XdmfField {
  std::string name, dataset;   // dataset path inside the HDF5 file
  std::vector<hsize_t> start;  // non-empty: a hyperslab of a 4-D dataset at this first index
  double time = 0;
  hsize_t first_dim = 0;
};

void write_xdmf(const std::string& h5_path, const GridSpec& g, const std::vector<XdmfField>& fields, bool fp64,
                bool temporal) {
  const std::string file = std::filesystem::path(h5_path).filename().string();
  const std::string dims = fmt::format("{} {} {}", g.shape[0], g.shape[1], g.shape[2]);
  const std::string precision = fp64 ? "8" : "4";
  std::string body;
  for (const auto& f : fields) {
    std::string data;
    if (f.start.empty()) {
      data = fmt::format(
          "        <DataItem Dimensions=\"{}\" NumberType=\"Float\" Precision=\"{}\" Format=\"HDF\">{}:{}</DataItem>\n",
          dims, precision, file, f.dataset);
    } else {
      data = fmt::format(
          "        <DataItem ItemType=\"HyperSlab\" Dimensions=\"{0}\" Type=\"HyperSlab\">\n"
          "          <DataItem Dimensions=\"3 4\" Format=\"XML\">{1} 0 0 0 1 1 1 1 1 {0}</DataItem>\n"
          "          <DataItem Dimensions=\"{2} {0}\" NumberType=\"Float\" Precision=\"{3}\" "
          "Format=\"HDF\">{4}:{5}</DataItem>\n"
          "        </DataItem>\n",
          dims, f.start[0], f.first_dim, precision, file, f.dataset);
    }
    body += fmt::format(
        "    <Grid Name=\"{0}\" GridType=\"Uniform\">\n{1}"
        "      <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"{2}\"/>\n"
        "      <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n"
        "        <DataItem Dimensions=\"3\" Format=\"XML\">{3} {4} {5}</DataItem>\n"
        "        <DataItem Dimensions=\"3\" Format=\"XML\">{6} {7} {8}</DataItem>\n"
        "      </Geometry>\n"
        "      <Attribute Name=\"{0}\" AttributeType=\"Scalar\" Center=\"Node\">\n{9}      </Attribute>\n"
        "    </Grid>\n",
        f.name, temporal ? fmt::format("      <Time Value=\"{}\"/>\n", f.time) : std::string(), dims, g.origin[0],
        g.origin[1], g.origin[2], g.spacing[0], g.spacing[1], g.spacing[2], data);
  }
  const std::string xml = fmt::format(
      "<?xml version=\"1.0\" ?>\n<Xdmf Version=\"3.0\">\n  <Domain>\n  <Grid Name=\"fields\" GridType=\"Collection\" "
      "CollectionType=\"{}\">\n{}  </Grid>\n  </Domain>\n</Xdmf>\n",
      temporal ? "Temporal" : "Spatial", body);
  const std::string path = std::filesystem::path(h5_path).replace_extension(".xdmf").string();
  const std::string tmp = path + ".tmp";
  unlink_stale(tmp);  // never written through a symlink planted there
  {
    std::ofstream out(tmp);
    out << xml;
    if (!out.good()) throw Error(ExitCode::output_error, "cannot write " + tmp);
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace

void write_grid_attributes(hid_t dataset, const GridSpec& g) {
  h5::write_attribute(dataset, "spacing", std::span<const double>(g.spacing.data(), 3));
  h5::write_attribute(dataset, "origin", std::span<const double>(g.origin.data(), 3));
  h5::write_attribute(dataset, "axis_order", std::string("z,y,x (C order, x fastest)"));
}

TraceFile::TraceFile(const std::string& path, const h5::Provenance& provenance, bool fp64, int n_shots,
                     const std::vector<Vec3>& receivers, const std::vector<std::vector<Vec3>>& sources, int nt,
                     double dt, const h5::Parallel& parallel, const h5::Resumable& resumable)
    : file_(path, parallel, resumable), fp64_(fp64), per_shot_(receivers.size() * std::size_t(nt)), nt_(nt) {
  if (file_.reopened()) {
    traces_ = open_existing(file_.id(), "traces", path);
    return;
  }
  h5::write_root_attributes(file_.id(), provenance);
  create_traces({hsize_t(n_shots), hsize_t(receivers.size()), hsize_t(nt)}, dt, "shot, receiver, sample");
  std::vector<double> rec;
  for (const auto& r : receivers) rec.insert(rec.end(), r.begin(), r.end());
  h5::write_dataset<double>(file_.id(), "receiver_coordinates", {hsize_t(receivers.size()), 3}, rec.data(), "m");
  write_sources(sources);
}

TraceFile::TraceFile(const std::string& path, const h5::Provenance& provenance, bool fp64,
                     const std::vector<std::vector<Vec3>>& shot_receivers,
                     const std::vector<std::vector<Vec3>>& sources, int nt, double dt, const h5::Parallel& parallel,
                     const h5::Resumable& resumable)
    : file_(path, parallel, resumable), fp64_(fp64), per_shot_(0), nt_(nt) {
  first_trace_.push_back(0);
  for (const auto& r : shot_receivers) first_trace_.push_back(first_trace_.back() + std::int64_t(r.size()));
  if (file_.reopened()) {
    traces_ = open_existing(file_.id(), "traces", path);
    return;
  }
  h5::write_root_attributes(file_.id(), provenance);
  create_traces({hsize_t(first_trace_.back()), hsize_t(nt)}, dt, "trace, sample");
  std::vector<double> rec;
  rec.reserve(3 * std::size_t(first_trace_.back()));
  for (const auto& shot : shot_receivers)
    for (const auto& r : shot) rec.insert(rec.end(), r.begin(), r.end());
  h5::write_dataset<double>(file_.id(), "receiver_coordinates", {hsize_t(first_trace_.back()), 3}, rec.data(), "m");
  h5::write_dataset<std::int64_t>(file_.id(), "shot_first_trace", {hsize_t(first_trace_.size())}, first_trace_.data(),
                                  "");
  write_sources(sources);
}

void TraceFile::create_traces(const std::vector<hsize_t>& dims, double dt, const std::string& axis_order) {
  traces_ = fp64_ ? h5::write_dataset<double>(file_.id(), "traces", dims, nullptr, "source amplitude / m")
                  : h5::write_dataset<float>(file_.id(), "traces", dims, nullptr, "source amplitude / m");
  h5::write_attribute(traces_.id(), "dt", dt);
  h5::write_attribute(traces_.id(), "t0", 0.0);
  h5::write_attribute(traces_.id(), "axis_order", axis_order);
}

void TraceFile::write_components(const std::vector<ReceiverComponent>& components) {
  if (file_.reopened()) return;
  std::vector<std::int32_t> codes(components.size());
  for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = std::int32_t(components[i]);
  h5::Handle d =
      h5::write_dataset<std::int32_t>(file_.id(), "receiver_component", {hsize_t(codes.size())}, codes.data(), "");
  h5::write_attribute(d.id(), "names", std::string("p,vz,vy,vx"));
}

void TraceFile::write_sources(const std::vector<std::vector<Vec3>>& sources) {
  std::vector<double> src;
  std::vector<std::int32_t> shot_of;
  for (std::size_t s = 0; s < sources.size(); ++s)
    for (const auto& p : sources[s]) {
      src.insert(src.end(), p.begin(), p.end());
      shot_of.push_back(std::int32_t(s));
    }
  h5::write_dataset<double>(file_.id(), "source_coordinates", {hsize_t(shot_of.size()), 3}, src.data(), "m");
  h5::write_dataset<std::int32_t>(file_.id(), "source_shot", {hsize_t(shot_of.size())}, shot_of.data(), "");
}

void TraceFile::write_shot(int shot, std::span<const double> traces) {
  std::vector<float> f;
  const auto write = [&](const std::vector<hsize_t>& start, const std::vector<hsize_t>& count, bool collective) {
    const bool has = shot >= 0 && count[0] > 0;
    if (fp64_)
      return h5::write_hyperslab<double>(traces_.id(), start, count, has ? traces.data() : nullptr, collective);
    f.assign(traces.begin(), traces.end());
    h5::write_hyperslab<float>(traces_.id(), start, count, has ? f.data() : nullptr, collective);
  };
  if (!first_trace_.empty()) {  // ragged: shot s's rows
    const std::size_t s = std::size_t(std::max(shot, 0));
    const hsize_t rows = shot >= 0 ? hsize_t(first_trace_[s + 1] - first_trace_[s]) : 0;
    if (shot >= 0 && traces.size() != rows * hsize_t(nt_))
      throw std::logic_error("TraceFile::write_shot: a shot's traces do not match its receivers");
    return write({hsize_t(first_trace_[s]), 0}, {rows, hsize_t(nt_)}, file_.parallel());
  }
  if (!file_.parallel()) {
    if (fp64_) return h5::write_first_dim_slab<double>(traces_.id(), shot, traces.data());
    f.assign(traces.begin(), traces.end());
    return h5::write_first_dim_slab<float>(traces_.id(), shot, f.data());
  }
  h5::Handle space(H5Dget_space(traces_.id()));
  hsize_t dims[3];
  H5Sget_simple_extent_dims(space.id(), dims, nullptr);
  write({hsize_t(std::max(shot, 0)), 0, 0}, {hsize_t(shot >= 0 ? 1 : 0), dims[1], dims[2]}, true);
}

std::vector<std::int64_t> read_shot_first_trace(const h5::Reader& reader) {
  if (!reader.has_dataset("/shot_first_trace")) return {};
  const auto info = reader.info("/shot_first_trace");
  const std::string where = fmt::format("{}: dataset '/shot_first_trace'", reader.path());
  if (info.dims.size() != 1 || info.dims[0] < 2 || info.type_class != H5T_INTEGER)
    throw Error(ExitCode::input_error,
                fmt::format("{} must be a 1-D integer array of n_shots + 1 >= 2 row offsets (docs/hdf5-schema.md), it "
                            "is {} of {} dimension(s)",
                            where, info.dtype_name(), info.dims.size()));
  std::vector<std::int64_t> out(info.dims[0]);
  h5::Handle d = reader.open_dataset("/shot_first_trace");
  if (H5Dread(d.id(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
    throw Error(ExitCode::input_error, fmt::format("{}: cannot be read", where));
  for (std::size_t s = 0; s < out.size(); ++s)
    if ((s == 0 && out[0] != 0) || (s > 0 && out[s] < out[s - 1]))
      throw Error(ExitCode::input_error,
                  fmt::format("{}: entry {} is {}; the offsets must start at 0 and never decrease (shot s's traces "
                              "are rows [entry s, entry s + 1))",
                              where, s, out[s]));
  return out;
}

WavefieldFile::WavefieldFile(const std::string& path, const h5::Provenance& provenance, bool fp64, const GridSpec& g,
                             int n_shots, const std::vector<int>& steps, double dt, bool final_field, int nt,
                             const h5::Parallel& parallel, const h5::Resumable& resumable)
    : file_(path, parallel, resumable), grid_(g), steps_(steps), dt_(dt), fp64_(fp64), nt_(nt) {
  if (file_.reopened()) {
    for (int s = 0; s < n_shots; ++s) {
      if (!steps.empty()) snapshots_.push_back(open_existing(file_.id(), shot_group(s) + "/snapshots", path));
      if (final_field) finals_.push_back(open_existing(file_.id(), shot_group(s) + "/final", path));
    }
    return;
  }
  h5::write_root_attributes(file_.id(), provenance);
  const std::vector<hsize_t> grid_dims = {hsize_t(g.shape[0]), hsize_t(g.shape[1]), hsize_t(g.shape[2])};
  for (int s = 0; s < n_shots; ++s) {
    h5::Handle group = h5::create_group(file_.id(), shot_group(s));
    if (!steps.empty()) {
      std::vector<hsize_t> dims = grid_dims;
      dims.insert(dims.begin(), steps.size());
      auto d = fp64 ? h5::write_dataset<double>(group.id(), "snapshots", dims, nullptr, "source amplitude / m")
                    : h5::write_dataset<float>(group.id(), "snapshots", dims, nullptr, "source amplitude / m");
      write_grid_attributes(d.id(), g);
      std::vector<double> step_values(steps.begin(), steps.end()), times;
      for (int n : steps) times.push_back(n * dt);
      h5::write_attribute(d.id(), "steps", std::span<const double>(step_values));
      h5::write_attribute(d.id(), "times", std::span<const double>(times));
      snapshots_.push_back(std::move(d));
    }
    if (final_field) {
      auto d = fp64 ? h5::write_dataset<double>(group.id(), "final", grid_dims, nullptr, "source amplitude / m")
                    : h5::write_dataset<float>(group.id(), "final", grid_dims, nullptr, "source amplitude / m");
      write_grid_attributes(d.id(), g);
      h5::write_attribute(d.id(), "step", std::int64_t(nt));
      h5::write_attribute(d.id(), "time", nt * dt);
      finals_.push_back(std::move(d));
    }
  }
}

template <class T>
void WavefieldFile::write_snapshot(int shot, int index, const T* field) {
  h5::write_first_dim_slab<T>(snapshots_.at(shot).id(), index, field);
}

template <class T>
void WavefieldFile::write_final(int shot, const T* field) {
  const hid_t d = finals_.at(shot).id();
  if (H5Dwrite(d, h5::native_type<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, field) < 0)
    throw Error(ExitCode::output_error, "HDF5: cannot write final field of shot " + std::to_string(shot));
}

template <class T>
void WavefieldFile::write_snapshot_block(int shot, int index, const Box& begin, const Box& extent, const T* field) {
  const std::vector<hsize_t> start = {hsize_t(index), hsize_t(begin[0]), hsize_t(begin[1]), hsize_t(begin[2])};
  const std::vector<hsize_t> count = {1, hsize_t(extent[0]), hsize_t(extent[1]), hsize_t(extent[2])};
  h5::write_hyperslab<T>(snapshots_.at(shot).id(), start, count, field, file_.parallel());
}

template <class T>
void WavefieldFile::write_final_block(int shot, const Box& begin, const Box& extent, const T* field) {
  const std::vector<hsize_t> start = {hsize_t(begin[0]), hsize_t(begin[1]), hsize_t(begin[2])};
  const std::vector<hsize_t> count = {hsize_t(extent[0]), hsize_t(extent[1]), hsize_t(extent[2])};
  h5::write_hyperslab<T>(finals_.at(shot).id(), start, count, field, file_.parallel());
}

template void WavefieldFile::write_snapshot_block<float>(int, int, const Box&, const Box&, const float*);
template void WavefieldFile::write_snapshot_block<double>(int, int, const Box&, const Box&, const double*);
template void WavefieldFile::write_final_block<float>(int, const Box&, const Box&, const float*);
template void WavefieldFile::write_final_block<double>(int, const Box&, const Box&, const double*);
template void WavefieldFile::write_snapshot<float>(int, int, const float*);
template void WavefieldFile::write_snapshot<double>(int, int, const double*);
template void WavefieldFile::write_final<float>(int, const float*);
template void WavefieldFile::write_final<double>(int, const double*);

void WavefieldFile::commit() {
  std::vector<XdmfField> fields;
  const int shots = int(std::max(snapshots_.size(), finals_.size()));
  const bool has_final = !finals_.empty();
  for (int s = 0; s < shots; ++s) {
    for (std::size_t k = 0; k < steps_.size(); ++k)
      fields.push_back({fmt::format("shot{}_u", s),
                        "/" + shot_group(s) + "/snapshots",
                        {hsize_t(k)},
                        steps_[k] * dt_,
                        hsize_t(steps_.size())});
    if (!finals_.empty())
      fields.push_back({fmt::format("shot{}_u", s), "/" + shot_group(s) + "/final", {}, nt_ * dt_, 0});
  }
  snapshots_.clear();
  finals_.clear();
  const std::string path = file_.path();
  const bool writes_sidecar = file_.rank() == 0;
  file_.commit();
  if (!writes_sidecar) return;
  // ParaView's legacy XDMF reader: one time series per variable, shot 0's snapshots and final field over time.
  std::vector<XdmfField> first_shot;
  for (const auto& f : fields)
    if (f.name == "shot0_u") first_shot.push_back(f);
  write_xdmf(path, grid_, first_shot, fp64_, true);
  // ParaView's default reader: a VTKHDF view of every snapshot and final field of every shot.
  const std::vector<std::string> views = wavefield_view_paths(path, shots, steps_, has_final);
  std::size_t v = 0;
  for (int s = 0; s < shots; ++s) {
    const std::string group = fmt::format("/{}", shot_group(s));
    for (std::size_t k = 0; k < steps_.size(); ++k)
      write_vtkhdf_view(views.at(v++), path, grid_, {{"u", group + "/snapshots", static_cast<long long>(k)}});
    if (has_final) write_vtkhdf_view(views.at(v++), path, grid_, {{"u", group + "/final"}});
  }
}

void write_model_file(const std::string& path, const h5::Provenance& provenance, const GridSpec& g,
                      std::span<const float> velocity, const std::array<int, 3>& begin,
                      const std::array<int, 3>& extent_in, const h5::Parallel& parallel, std::span<const float> density,
                      std::span<const float> shear) {
  if ((!density.empty() && density.size() != std::size_t(g.points())) ||
      (!shear.empty() && shear.size() != std::size_t(g.points())))
    throw std::logic_error("write_model_file: the density and the shear velocity must hold the whole grid");
  h5::AtomicWriter file(path, parallel);
  h5::write_root_attributes(file.id(), provenance);
  const std::vector<hsize_t> dims = {hsize_t(g.shape[0]), hsize_t(g.shape[1]), hsize_t(g.shape[2])};
  const std::array<int, 3> extent = extent_in[0] < 0 ? g.shape : extent_in;
  auto d = h5::write_dataset<float>(file.id(), "velocity", dims, nullptr, "m/s");
  h5::write_hyperslab<float>(d.id(), {hsize_t(begin[0]), hsize_t(begin[1]), hsize_t(begin[2])},
                             {hsize_t(extent[0]), hsize_t(extent[1]), hsize_t(extent[2])}, velocity.data(),
                             file.parallel());
  write_grid_attributes(d.id(), g);
  d.close();
  std::vector<XdmfField> fields = {{"velocity", "/velocity", {}, 0, 0}};
  std::vector<ViewArray> views = {{"velocity", "/velocity"}};
  for (const auto& [name, values, units] :
       {std::tuple{"density", density, "kg/m^3"}, std::tuple{"shear_velocity", shear, "m/s"}}) {
    if (values.empty()) continue;
    auto r = h5::write_dataset<float>(file.id(), name, dims, values.data(), units);
    write_grid_attributes(r.id(), g);
    fields.push_back({name, std::string("/") + name, {}, 0, 0});
    views.push_back({name, std::string("/") + name});
  }
  file.commit();
  if (file.rank() != 0) return;
  write_xdmf(path, g, fields, false, false);
  write_vtkhdf_view(std::filesystem::path(path).replace_extension(".vtkhdf").string(), path, g, views);
}

void write_grid_arrays_file(const std::string& path, const h5::Provenance& provenance, const GridSpec& g,
                            const std::vector<GridArray>& arrays, const std::vector<NamedValues>& vectors,
                            const std::vector<std::pair<std::string, double>>& attributes,
                            const std::vector<std::pair<std::string, std::string>>& text_attributes) {
  h5::AtomicWriter file(path);
  h5::write_root_attributes(file.id(), provenance);
  for (const auto& [name, value] : attributes) h5::write_attribute(file.id(), name, value);
  for (const auto& [name, value] : text_attributes) h5::write_attribute(file.id(), name, value);
  const std::vector<hsize_t> dims = {hsize_t(g.shape[0]), hsize_t(g.shape[1]), hsize_t(g.shape[2])};
  std::vector<XdmfField> fields;
  std::vector<ViewArray> views;
  for (const auto& a : arrays) {
    if (a.values.size() != std::size_t(g.points()))
      throw std::logic_error(
          fmt::format("write_grid_arrays_file: {} has {} values for {} points", a.name, a.values.size(), g.points()));
    auto d = h5::write_dataset<double>(file.id(), a.name, dims, a.values.data(), a.units);
    write_grid_attributes(d.id(), g);
    fields.push_back({a.name, "/" + a.name, {}, 0, 0});
    views.push_back({a.name, "/" + a.name});
  }
  for (const auto& v : vectors)
    h5::write_dataset<double>(file.id(), v.name, {hsize_t(v.values.size())}, v.values.data(), v.units);
  file.commit();
  write_xdmf(path, g, fields, true, false);
  write_vtkhdf_view(std::filesystem::path(path).replace_extension(".vtkhdf").string(), path, g, views);
}

}  // namespace specwave::io
