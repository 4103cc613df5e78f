#include "collectives/schedule_builder.h"

namespace spmd::collectives {

ScheduleBuilder::ScheduleBuilder(std::string algorithm, const CollectiveShape& shape,
                                 std::int64_t input_elements, std::int64_t work_elements,
                                 WorkFill fill) {
  schedule_.algorithm = std::move(algorithm);
  schedule_.ranks = shape.ranks;
  schedule_.input_elements = input_elements;
  schedule_.work_elements = work_elements;
  schedule_.work_fill = fill;
  const auto n = static_cast<std::size_t>(shape.ranks);
  schedule_.input_offset.assign(n, 0);
  schedule_.result_begin.assign(n, 0);
  schedule_.result_end.assign(n, work_elements);
}

void ScheduleBuilder::set_result(int rank, std::int64_t begin, std::int64_t end) {
  schedule_.result_begin[static_cast<std::size_t>(rank)] = begin;
  schedule_.result_end[static_cast<std::size_t>(rank)] = end;
}

void ScheduleBuilder::add(std::size_t step, const Transfer& transfer) {
  if (transfer.elements() <= 0) return;
  if (schedule_.steps.size() <= step) schedule_.steps.resize(step + 1);
  schedule_.steps[step].transfers.push_back(transfer);
}

Schedule ScheduleBuilder::build() {
  std::erase_if(schedule_.steps, [](const Step& s) { return s.transfers.empty(); });
  schedule_.validate();
  return std::move(schedule_);
}

std::int64_t piece_elements(const CollectiveShape& shape) {
  return std::max<std::int64_t>(1, shape.pipeline_chunk_bytes / shape.element_bytes);
}

}  // namespace spmd::collectives
