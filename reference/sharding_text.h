#pragma once
// The short text forms a person types for a mesh, its axis names, a PartitionSpec and an array
// shape (`spmdsim sharding --mesh 2x4 --names data,model --spec 'data,None' --shape 16,8`).
// Each parser throws spmd::Error naming `field`, the text and the form it expected.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "reference/partition_spec.h"

namespace spmd {

// "2x4": positive axis sizes joined by 'x'.
std::vector<int> parse_mesh_shape(std::string_view text, const std::string& field);

// "data,model": names joined by ','.
std::vector<std::string> parse_axis_names(std::string_view text, const std::string& field);

// The mesh of `shape_text` (parse_mesh_shape) and `names_text` (parse_axis_names): one name per
// axis, each once; errors name `shape_field` or `names_field`.
Mesh parse_mesh(std::string_view shape_text, std::string_view names_text,
                const std::string& shape_field, const std::string& names_field);

// "data,None", "(data,model),None", "None": one entry per dimension, each None, an axis name, or
// a parenthesized list of axis names (the first listed is the most significant), as P(...) takes.
PartitionSpec parse_partition_spec(std::string_view text, const std::string& field);

// "16,8": non-negative dimension sizes joined by ','.
std::vector<std::int64_t> parse_array_shape(std::string_view text, const std::string& field);

}  // namespace spmd
