#pragma once
// Runs a collective schedule (collectives/schedule.h) on one GPU: every rank is a virtual device
// with its own input and work buffers and its own stream. A step's transfers are device-to-device
// copies from the sources into a receive area (all of them read as the step starts), then, once
// every stream has sent, each is applied to its destination's work buffer in the order listed:
// a copy, or the combine kernel (backends/cuda/element_kernels.h) with the received operand on the
// side the transfer names. Each element is thus computed exactly as collectives::run_schedule_data
// computes it on the CPU, so the bits are the same.

#include <span>
#include <vector>

#include "collectives/schedule.h"
#include "reference/array.h"
#include "reference/float_numerics.h"
#include "reference/fold_reduce.h"

namespace spmd::cuda {

// `flat_inputs[r]` is rank r's input: a 1-D array of schedule.input_elements, all of one dtype.
// Returns each rank's result, work[result_begin, result_end), as a 1-D array. Runs on the current
// CUDA device; spmd::Error for bad inputs or a CUDA failure. The kernels keep IEEE subnormals
// (built without -ftz) unless `numerics` flushes them, as XLA:CPU's do: then every reduction step
// flushes its operands and result, as run_schedule_data does.
std::vector<Array> run_schedule_on_gpu(const collectives::Schedule& schedule,
                                       std::span<const Array> flat_inputs, ReduceOp op,
                                       const FloatNumerics& numerics = kIeeeNumerics);

}  // namespace spmd::cuda
