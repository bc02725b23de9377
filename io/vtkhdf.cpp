#include "io/vtkhdf.hpp"

#include <fmt/format.h>
#include <hdf5.h>

#include <array>
#include <cstdint>
#include <filesystem>

#include "io/hdf5.hpp"
#include "solver/case/errors.hpp"

namespace specwave::io {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw Error(ExitCode::output_error, fmt::format("cannot write the ParaView view {}: {}", path, what));
}

template <std::size_t N>
void attribute(hid_t object, const char* name, hid_t file_type, hid_t memory_type, const std::array<double, N>* d,
               const std::array<std::int64_t, N>* i, const std::string& path) {
  const hsize_t dims[1] = {N};
  h5::Handle space(H5Screate_simple(1, dims, nullptr));
  h5::Handle attr(H5Acreate2(object, name, file_type, space.id(), H5P_DEFAULT, H5P_DEFAULT));
  const void* data = d ? static_cast<const void*>(d->data()) : static_cast<const void*>(i->data());
  if (!attr || H5Awrite(attr.id(), memory_type, data) < 0) fail(path, fmt::format("attribute {}", name));
}
template <std::size_t N>
void doubles(hid_t object, const char* name, const std::array<double, N>& v, const std::string& path) {
  attribute<N>(object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &v, nullptr, path);
}
template <std::size_t N>
void integers(hid_t object, const char* name, const std::array<std::int64_t, N>& v, const std::string& path) {
  attribute<N>(object, name, H5T_STD_I64LE, H5T_NATIVE_INT64, nullptr, &v, path);
}
// A scalar fixed-length ASCII string, as VTK writes its own VTKHDF files.
void text(hid_t object, const char* name, const std::string& value, const std::string& path) {
  h5::Handle type(H5Tcopy(H5T_C_S1));
  H5Tset_size(type.id(), value.size());
  H5Tset_strpad(type.id(), H5T_STR_NULLPAD);
  h5::Handle space(H5Screate(H5S_SCALAR));
  h5::Handle attr(H5Acreate2(object, name, type.id(), space.id(), H5P_DEFAULT, H5P_DEFAULT));
  if (!attr || H5Awrite(attr.id(), type.id(), value.data()) < 0) fail(path, fmt::format("attribute {}", name));
}

// The type and extents of `dataset` in the output file (read-only; the file is complete).
struct Source {
  h5::Handle type;
  std::vector<hsize_t> dims;
};
Source source_info(hid_t file, const std::string& dataset, const std::string& view_path, const std::string& h5_path) {
  h5::Handle d(H5Dopen2(file, dataset.c_str(), H5P_DEFAULT));
  if (!d) fail(view_path, fmt::format("{} has no dataset {}", h5_path, dataset));
  Source s;
  s.type = h5::Handle(H5Dget_type(d.id()));
  h5::Handle space(H5Dget_space(d.id()));
  const int rank = H5Sget_simple_extent_ndims(space.id());
  s.dims.resize(std::size_t(std::max(rank, 0)));
  if (rank > 0) H5Sget_simple_extent_dims(space.id(), s.dims.data(), nullptr);
  return s;
}

}  // namespace

void write_vtkhdf_view(const std::string& view_path, const std::string& h5_path, const GridSpec& g,
                       const std::vector<ViewArray>& arrays) {
  const std::string target = fs::path(h5_path).filename().string();  // relative: resolved beside the view
  h5::Handle source(H5Fopen(h5_path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!source) fail(view_path, "cannot open " + h5_path);
  // A temporary created afresh (never through a symlink), renamed on commit, removed if anything fails.
  h5::AtomicWriter file(view_path);
  {
    h5::Handle root = h5::create_group(file.id(), "VTKHDF");
    integers<2>(root.id(), "Version", {1, 0}, view_path);
    text(root.id(), "Type", "ImageData", view_path);
    integers<6>(root.id(), "WholeExtent", {0, g.shape[2] - 1, 0, g.shape[1] - 1, 0, g.shape[0] - 1}, view_path);
    doubles<3>(root.id(), "Origin", {g.origin[2], g.origin[1], g.origin[0]}, view_path);
    doubles<3>(root.id(), "Spacing", {g.spacing[2], g.spacing[1], g.spacing[0]}, view_path);
    doubles<9>(root.id(), "Direction", {1, 0, 0, 0, 1, 0, 0, 0, 1}, view_path);
    h5::Handle points = h5::create_group(root.id(), "PointData");
    if (!arrays.empty()) text(points.id(), "Scalars", arrays.front().name, view_path);
    const std::array<hsize_t, 3> grid_dims = {hsize_t(g.shape[0]), hsize_t(g.shape[1]), hsize_t(g.shape[2])};
    for (const ViewArray& a : arrays) {
      const Source s = source_info(source.id(), a.dataset, view_path, h5_path);
      const std::size_t rank = a.index < 0 ? 3 : 4;
      bool shape_ok = s.dims.size() == rank;
      for (std::size_t k = 0; shape_ok && k < 3; ++k) shape_ok = s.dims[rank - 3 + k] == grid_dims[k];
      if (!shape_ok || (a.index >= 0 && hsize_t(a.index) >= s.dims[0]))
        fail(view_path,
             fmt::format("{}:{} is not a field of the grid (or has no slice {})", h5_path, a.dataset, a.index));
      if (a.index < 0) {
        if (H5Lcreate_external(target.c_str(), a.dataset.c_str(), points.id(), a.name.c_str(), H5P_DEFAULT,
                               H5P_DEFAULT) < 0)
          fail(view_path, "external link to " + a.dataset);
        continue;
      }
      h5::Handle view_space(H5Screate_simple(3, grid_dims.data(), nullptr));
      h5::Handle source_space(H5Screate_simple(4, s.dims.data(), nullptr));
      const hsize_t start[4] = {hsize_t(a.index), 0, 0, 0};
      const hsize_t count[4] = {1, grid_dims[0], grid_dims[1], grid_dims[2]};
      H5Sselect_hyperslab(source_space.id(), H5S_SELECT_SET, start, nullptr, count, nullptr);
      h5::Handle dcpl(H5Pcreate(H5P_DATASET_CREATE));
      if (H5Pset_virtual(dcpl.id(), view_space.id(), target.c_str(), a.dataset.c_str(), source_space.id()) < 0)
        fail(view_path, "virtual dataset of " + a.dataset);
      h5::Handle d(
          H5Dcreate2(points.id(), a.name.c_str(), s.type.id(), view_space.id(), H5P_DEFAULT, dcpl.id(), H5P_DEFAULT));
      if (!d) fail(view_path, "virtual dataset of " + a.dataset);
    }
  }
  file.commit();
}

std::vector<std::string> wavefield_view_paths(const std::string& h5_path, int shots, const std::vector<int>& steps,
                                              bool final_field) {
  const fs::path p(h5_path);
  const std::string stem = (p.parent_path() / p.stem()).string();
  std::vector<std::string> out;
  for (int s = 0; s < shots; ++s) {
    for (int n : steps) out.push_back(fmt::format("{}_shot{:04d}_step{:06d}.vtkhdf", stem, s, n));
    if (final_field) out.push_back(fmt::format("{}_shot{:04d}_final.vtkhdf", stem, s));
  }
  return out;
}

}  // namespace specwave::io
