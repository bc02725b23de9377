#include "solver/inversion/evaluation_log.hpp"

#include <fmt/format.h>
#include <cstring>
#include <filesystem>

#include "io/hdf5.hpp"

namespace specwave {

std::uint64_t model_hash(const optim::Vector& x) {
  std::uint64_t h = 14695981039346656037ull;
  const auto* bytes = reinterpret_cast<const unsigned char*>(x.data());
  for (std::size_t k = 0; k < std::size_t(x.size()) * sizeof(double); ++k) h = (h ^ bytes[k]) * 1099511628211ull;
  return h;
}

void EvaluationLog::reset(std::size_t state_key) {
  state_key_ = state_key;
  entries_.clear();
  next_ = 0;
  replaying_ = false;
  if (writer_) std::filesystem::remove(path_);
}

void EvaluationLog::load(std::size_t state_key, std::size_t n) {
  state_key_ = state_key;
  entries_.clear();
  next_ = 0;
  replaying_ = false;
  if (!std::filesystem::exists(path_)) return;
  io::h5::Reader r(path_);
  if (std::size_t(io::h5::read_attribute_doubles(r.id(), "state_rows").at(0)) != state_key) return;  // another state's
  const std::vector<std::string> hashes = r.read_strings("model_hash");
  const hsize_t k = hsize_t(hashes.size());
  if (k == 0) return;
  // Every array's checksum, and the hashes' (one over their text), verified: a corrupt log is an error, never a
  // replayed misfit that the run did not compute.
  std::string hash_text;
  for (const auto& h : hashes) hash_text += h + ";";
  io::h5::Handle hash_set = r.open_dataset("model_hash");
  io::h5::verify_checksum(hash_set.id(), hash_text.data(), hash_text.size(), path_, "the array model_hash");
  const auto values = io::h5::read_checked_doubles(r, "misfit", {k});
  const auto gradients = io::h5::read_checked_doubles(r, "gradient", {k, hsize_t(n)});
  const hsize_t shots = r.has_dataset("misfit_per_shot") ? r.info("misfit_per_shot").dims.at(1) : 0;
  const auto per_shot =
      shots > 0 ? io::h5::read_checked_doubles(r, "misfit_per_shot", {k, shots}) : std::vector<double>{};
  for (hsize_t e = 0; e < k; ++e) {
    Entry entry;
    entry.hash = std::stoull(hashes[e], nullptr, 16);
    entry.logged.at.value = values[e];
    entry.logged.at.gradient = Eigen::Map<const optim::Vector>(gradients.data() + e * n, Eigen::Index(n));
    entry.logged.misfit_per_shot.assign(per_shot.begin() + std::ptrdiff_t(e * shots),
                                        per_shot.begin() + std::ptrdiff_t((e + 1) * shots));
    entries_.push_back(std::move(entry));
  }
  replaying_ = true;
}

std::optional<LoggedEvaluation> EvaluationLog::replay(const optim::Vector& x) {
  if (!replaying_ || next_ >= entries_.size() || entries_[next_].hash != model_hash(x)) {
    replaying_ = false;
    return std::nullopt;
  }
  ++replayed_;
  return entries_[next_++].logged;
}

void EvaluationLog::append(const optim::Vector& x, const LoggedEvaluation& e) {
  replaying_ = false;
  entries_.resize(next_);  // what was not replayed is stale
  entries_.push_back({model_hash(x), e});
  next_ = entries_.size();
  if (writer_) write();
}

void EvaluationLog::write() const {
  const std::size_t n = entries_.empty() ? 0 : std::size_t(entries_.front().logged.at.gradient.size());
  const std::size_t shots = entries_.empty() ? 0 : entries_.front().logged.misfit_per_shot.size();
  std::vector<std::string> hashes;
  std::vector<double> values, gradients, per_shot;
  for (const auto& e : entries_) {
    const optim::Evaluation& at = e.logged.at;
    hashes.push_back(fmt::format("{:016x}", e.hash));
    values.push_back(at.value);
    gradients.insert(gradients.end(), at.gradient.data(), at.gradient.data() + at.gradient.size());
    per_shot.insert(per_shot.end(), e.logged.misfit_per_shot.begin(), e.logged.misfit_per_shot.end());
  }
  io::h5::AtomicWriter file(path_);
  io::h5::write_identity_attributes(file.id(), "specwave.inversion_evaluations");
  io::h5::write_attribute(file.id(), "state_rows", std::int64_t(state_key_));
  std::string hash_text;
  for (const auto& h : hashes) hash_text += h + ";";
  io::h5::Handle hash_set = io::h5::write_string_dataset(file.id(), "model_hash", hashes);
  io::h5::write_checksum(hash_set.id(), hash_text.data(), hash_text.size());
  io::h5::write_checked_doubles(file.id(), "misfit", {hsize_t(values.size())}, values.data(), "misfit");
  io::h5::write_checked_doubles(file.id(), "gradient", {hsize_t(values.size()), hsize_t(n)}, gradients.data(),
                                "misfit per parameter unit");
  io::h5::write_checked_doubles(file.id(), "misfit_per_shot", {hsize_t(values.size()), hsize_t(shots)}, per_shot.data(),
                                "misfit");
  file.commit();
}

}  // namespace specwave
