#pragma once
// How the simulator carries out one group's part of a collective call: the schedule's shape
// (kind, element count and width, ring order, torus dims), the algorithm, the element type the
// data moves in and the reduction op; then, from the group's inputs, every member's result.
// The conversions are JAX's and XLA's: psum of bool sums int32, psum_scatter of bool is an OR
// (max), pmean is psum * RN(1/n), and under the direct algorithm (XLA:CPU's order) bfloat16 sums
// are carried in float32 and rounded once.

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "collectives/algorithm.h"
#include "collectives/schedule_data.h"
#include "reference/array.h"
#include "reference/collective_call.h"
#include "reference/fold_reduce.h"
#include "reference/ring_order.h"
#include "sim/mesh_placement.h"

namespace spmd::sim {

// What the machine decides for every collective: the topology's facts and the algorithm rules.
// A requested algorithm that cannot run a collective gives way to a ring (or direct, for
// permutes), with a note in the cost log.
struct AlgorithmChoice {
  topology::TopologyTraits topology_traits;
  DeviceRing ring_order;  // the topology's ring, by device id
  bool ring_by_rank = false;    // rings and trees follow group rank order, not the topology's
  std::int64_t pipeline_chunk_bytes = 2 * 1024 * 1024;
  std::optional<collectives::Algorithm> forced;    // per call, else per machine (CLI --algorithm)
  std::optional<collectives::Algorithm> for_kind;  // the machine file's choice for this kind
};

struct CollectivePlan {
  collectives::CollectiveShape shape;
  collectives::Algorithm algorithm = collectives::Algorithm::direct;
  std::string algorithm_note;  // why the requested algorithm was not used, if it was not
  DType input_dtype = DType::float32;
  DType work_dtype = DType::float32;  // the type the schedule's data moves in
  ReduceOp op = ReduceOp::sum;
  int axis_size = 1;  // pmean's n (JAX's _axis_size)
};

// The plan for one group (its machine devices in rank order, and the grid they form along the
// machine's dimensions: sim/mesh_placement.h) of `call` on inputs of `dtype` / `shape`.
CollectivePlan plan_collective(const CollectiveCall& call, DType dtype, const Shape& shape,
                               const PlacedGroup& group, int axis_size,
                               const AlgorithmChoice& choice);

// What carries out a schedule's data: collectives::run_schedule_data on the CPU by default, or a
// device executor with the same semantics (backends/cuda run_schedule_on_gpu).
using ScheduleExecutor = std::function<std::vector<Array>(
    const collectives::Schedule& schedule, std::span<const Array> flat_inputs, ReduceOp op,
    const FloatNumerics& numerics)>;

// Every member's result, by executing `schedule` (built from plan.shape) on the group's inputs,
// with the platform's arithmetic `numerics`.
std::vector<Array> group_results(const CollectiveCall& call, const CollectivePlan& plan,
                                 const collectives::Schedule& schedule,
                                 const std::vector<Array>& inputs, const FloatNumerics& numerics,
                                 const ScheduleExecutor& execute = collectives::run_schedule_data);

// The result each member would get, as zeros: cost-only runs move no data.
Array zero_result(const CollectiveCall& call, const Array& input, int group_size);
// The result's dtype and shape without any data.
std::pair<DType, Shape> result_type(const CollectiveCall& call, DType dtype, const Shape& shape,
                                    int group_size);

}  // namespace spmd::sim
