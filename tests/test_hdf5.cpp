// The HDF5 layer: atomic writes, and readers that name the file and dataset in every error.
#include <doctest/doctest.h>

#include <filesystem>

#include "io/hdf5.hpp"
#include "solver/case/errors.hpp"

using namespace specwave;
namespace fs = std::filesystem;

TEST_CASE("atomic writer: nothing under the final name until commit; removed on failure") {
  const fs::path dir = fs::temp_directory_path() / "specwave_test_hdf5";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "a.h5").string();
  {
    io::h5::AtomicWriter w(path);
    std::vector<float> data = {1, 2, 3, 4, 5, 6};
    io::h5::write_dataset<float>(w.id(), "v", {2, 3}, data.data(), "m/s");
    CHECK_FALSE(fs::exists(path));
  }  // destroyed without commit
  CHECK_FALSE(fs::exists(path));
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}) == 0);
  {
    io::h5::AtomicWriter w(path);
    std::vector<float> data = {1, 2, 3, 4, 5, 6};
    io::h5::write_dataset<float>(w.id(), "v", {2, 3}, data.data(), "m/s");
    io::h5::write_root_attributes(w.id(), {"specwave.test", "fp32", "cpu", "text", "host", 1, 1});
    w.commit();
  }
  REQUIRE(fs::exists(path));
  io::h5::Reader r(path);
  CHECK(io::h5::read_attribute_string(r.id(), "file_type") == "specwave.test");
  CHECK(io::h5::read_attribute_string(r.id(), "schema_version") == io::h5::schema_version);
  const auto v = r.read_floating<double>("v", {2, 3});
  CHECK(v[5] == 6.0);
  auto message = [&](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      CHECK(e.code() == ExitCode::input_error);
      return std::string(e.what());
    }
    FAIL("no error");
    return std::string();
  };
  CHECK(message([&] {
          r.read_floating<float>("v", {3, 2});
        }).find("shape is (2, 3), expected (3, 2)") != std::string::npos);
  CHECK(message([&] { r.read_floating<float>("v", {2, 3, 1}); }).find("rank is 2") != std::string::npos);
  CHECK(message([&] { r.read_floating<float>("w", {2, 3}); }).find("dataset 'w' is missing") != std::string::npos);
  CHECK(message([&] { io::h5::Reader((dir / "none.h5").string()); }).find("file not found") != std::string::npos);
  fs::remove_all(dir);
}
