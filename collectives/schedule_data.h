#pragma once
// Runs a schedule's data: what every rank holds after the schedule's transfers, bit for bit.
//
// The transfers are executed symbolically: a work buffer is a list of pieces, each naming the
// expression its elements hold (an input range, the fill value, or op(lhs, rhs) of two earlier
// pieces), so a copy moves a reference and a reduce records one operation. Only the results are
// evaluated, tile by tile in cache, each operation exactly where and in the order the schedule
// put it. The bits are those of carrying every message and adding as it arrives; the memory
// traffic is that of one pass over the inputs. A generated input (Array::generated, as `spmdsim
// perf`'s seeded inputs are) is made tile by tile where it is read and never held whole.

#include <span>
#include <string_view>
#include <vector>

#include "collectives/schedule.h"
#include "reference/array.h"
#include "reference/float_numerics.h"
#include "reference/fold_reduce.h"

namespace spmd::collectives {

// `flat_inputs[r]` is rank r's input: a 1-D array of schedule.input_elements, all of one dtype.
// Returns each rank's result, work[result_begin, result_end), as a 1-D array; ranks whose
// results are the same expressions share one array. A bool sum is rejected, as in fold_reduce.
// Under numerics.flush_subnormals every operation flushes its operands and result (fold_reduce).
std::vector<Array> run_schedule_data(const Schedule& schedule, std::span<const Array> flat_inputs,
                                     ReduceOp op, const FloatNumerics& numerics);

// The checks above, for any executor of schedules (backends/cuda): one input per rank, each a 1-D
// array of input_elements of one dtype, and no bool sum. spmd::Error starting with `caller`.
void check_schedule_inputs(const Schedule& schedule, std::span<const Array> flat_inputs,
                           ReduceOp op, std::string_view caller);

}  // namespace spmd::collectives
