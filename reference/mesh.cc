#include "reference/mesh.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <limits>

#include "reference/error.h"

namespace spmd {

Mesh::Mesh(std::vector<int> shape, std::vector<std::string> axis_names)
    : shape_(std::move(shape)), axis_names_(std::move(axis_names)) {
  if (shape_.size() != axis_names_.size()) {
    throw Error(fmt::format(
        "Mesh requires the ndim of its first argument (`devices`) to equal the length of its "
        "second argument (`axis_names`), but got devices.ndim == {} and len(axis_names) == {}.",
        shape_.size(), axis_names_.size()));
  }
  for (std::size_t k = 0; k < shape_.size(); ++k) {
    if (shape_[k] < 1) {
      throw Error(fmt::format("mesh.shape[{}] = {}, expected a positive axis size", k, shape_[k]));
    }
    if (axis_names_[k].empty()) {
      throw Error(fmt::format("mesh.axis_names[{}] is empty, expected a name", k));
    }
    for (std::size_t j = 0; j < k; ++j) {
      if (axis_names_[j] == axis_names_[k]) {
        throw Error(
            fmt::format("mesh.axis_names has '{}' twice, expected unique names", axis_names_[k]));
      }
    }
    // Device numbers are ints everywhere, so the product must stay one (two ints' product fits
    // int64).
    const std::int64_t devices = std::int64_t{device_count_} * shape_[k];
    if (devices > std::numeric_limits<int>::max()) {
      throw Error(fmt::format("mesh.shape {}: more than {} devices, expected at most that",
                              shape_string(), std::numeric_limits<int>::max()));
    }
    device_count_ = static_cast<int>(devices);
  }
}

int Mesh::find_axis(std::string_view name) const {
  for (std::size_t k = 0; k < axis_names_.size(); ++k) {
    if (axis_names_[k] == name) return static_cast<int>(k);
  }
  return -1;
}

int Mesh::axis_size(std::string_view name) const {
  const int k = find_axis(name);
  if (k < 0) {
    throw Error(fmt::format("axis '{}' is not in mesh {}", name, to_string()));
  }
  return shape_[static_cast<std::size_t>(k)];
}

std::vector<int> Mesh::coordinates(int device) const {
  std::vector<int> coords(shape_.size(), 0);
  for (std::size_t k = shape_.size(); k-- > 0;) {
    coords[k] = device % shape_[k];
    device /= shape_[k];
  }
  return coords;
}

int Mesh::device_at(const std::vector<int>& coordinates) const {
  int device = 0;
  for (std::size_t k = 0; k < shape_.size(); ++k) device = device * shape_[k] + coordinates[k];
  return device;
}

std::string Mesh::to_string() const {
  std::vector<std::string> axes;
  for (std::size_t k = 0; k < shape_.size(); ++k) {
    axes.push_back(fmt::format("'{}': {}", axis_names_[k], shape_[k]));
  }
  return fmt::format("Mesh({})", fmt::join(axes, ", "));
}

std::string Mesh::shape_string() const {
  return fmt::format("({}{})", fmt::join(shape_, ", "), shape_.size() == 1 ? "," : "");
}

std::string Mesh::names_string() const {
  if (axis_names_.empty()) return "()";
  return fmt::format("('{}'{})", fmt::join(axis_names_, "', '"),
                     axis_names_.size() == 1 ? "," : "");
}

}  // namespace spmd
