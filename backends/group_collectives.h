#pragma once
// A collective library seen through the five operations every library has, over one group of
// devices and on flat buffers: the one thing a library backend (Open MPI, Gloo, a plugin) has to
// supply. Everything JAX adds on top (axes and axis_index_groups, tiling, split and concat axes,
// bool and pmean rules) is done once, in library_backend.h, around these calls.
//
// Each operation is called in one place with every member's buffer, so that a library whose
// ranks are threads runs one thread per member, and one whose ranks are processes (Open MPI)
// hands its own member's buffer to the library and shares the results.

#include <string>
#include <utility>
#include <vector>

#include "reference/array.h"
#include "reference/fold_reduce.h"

namespace spmd {

// One call of a library operation: the members' device ids in group rank order, and rank r's
// buffer in inputs[r]. Buffers are 1-D arrays of one dtype; an operation returns rank r's
// result in element r.
struct GroupBuffers {
  const std::vector<int>& devices;
  const std::vector<Array>& inputs;
  int size() const { return static_cast<int>(devices.size()); }
};

class GroupCollectives {
 public:
  virtual ~GroupCollectives() = default;

  // Every rank gets op over all ranks' buffers (equal sizes), element by element.
  virtual std::vector<Array> all_reduce(const GroupBuffers& group, ReduceOp op) = 0;
  // Every rank gets all ranks' buffers (equal sizes) concatenated in rank order.
  virtual std::vector<Array> all_gather(const GroupBuffers& group) = 0;
  // Rank r gets block r of op over all ranks' buffers; a buffer is group.size() equal blocks.
  virtual std::vector<Array> reduce_scatter(const GroupBuffers& group, ReduceOp op) = 0;
  // Rank r gets block r of every rank's buffer, concatenated in rank order; a buffer is
  // group.size() equal blocks.
  virtual std::vector<Array> all_to_all(const GroupBuffers& group) = 0;
  // For each (source, destination) pair of ranks (0..n-1, each source and each destination at
  // most once) the destination gets the source's buffer; ranks that are no destination get
  // zeros, as in jax.lax.ppermute.
  virtual std::vector<Array> permute(const GroupBuffers& group,
                                     const std::vector<std::pair<int, int>>& pairs) = 0;
};

}  // namespace spmd
