#pragma once
// A named N-d device mesh. Device ids are the row-major flat index over the mesh shape (JAX's
// partition id: mesh.devices.flat order).

#include <string>
#include <string_view>
#include <vector>

namespace spmd {

class Mesh {
 public:
  Mesh(std::vector<int> shape, std::vector<std::string> axis_names);

  const std::vector<int>& shape() const { return shape_; }
  const std::vector<std::string>& axis_names() const { return axis_names_; }
  int axis_count() const { return static_cast<int>(shape_.size()); }
  int device_count() const { return device_count_; }

  // Position of the named axis in the mesh, or -1 if the mesh has no such axis.
  int find_axis(std::string_view name) const;
  // Size of the named axis; spmd::Error if there is none.
  int axis_size(std::string_view name) const;

  std::vector<int> coordinates(int device) const;
  int device_at(const std::vector<int>& coordinates) const;

  // "Mesh('x': 2, 'y': 4)", as JAX prints a mesh.
  std::string to_string() const;
  // "(2, 4)" and "('x', 'y')", the pieces JAX's error messages quote.
  std::string shape_string() const;
  std::string names_string() const;

  friend bool operator==(const Mesh&, const Mesh&) = default;

 private:
  std::vector<int> shape_;
  std::vector<std::string> axis_names_;
  int device_count_ = 1;
};

}  // namespace spmd
