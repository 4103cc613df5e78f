#include "backends/mpi/mpi_pins.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <ranges>

#include "reference/error.h"

namespace spmd::mpi {

const OrderPin& order_pin(ReductionAlgorithm order) {
  for (const OrderPin& pin : kOrderPins) {
    if (pin.order == order) return pin;
  }
  throw Error(fmt::format(
      "--order {} with --backend mpi, expected one of: {}", reduction_algorithm_name(order),
      fmt::join(kOrderPins | std::views::transform([](const OrderPin& pin) {
                  return reduction_algorithm_name(pin.order);
                }),
                ", ")));
}

std::vector<McaParameter> mca_parameters(const OrderPin& pin) {
  return {
      {"coll_tuned_use_dynamic_rules", 1},
      {"coll_tuned_allreduce_algorithm", pin.coll_tuned_allreduce_algorithm},
      {"coll_tuned_reduce_scatter_algorithm", kReduceScatterRing},
      {"coll_tuned_reduce_scatter_block_algorithm", pin.coll_tuned_reduce_scatter_block_algorithm},
      {"coll_tuned_reduce_algorithm", kReduceLinear},
  };
}

std::vector<std::string> conflicting_mca_parameters(const std::vector<McaParameter>& parameters) {
  std::vector<std::string> conflicts;
  for (const McaParameter& parameter : parameters) {
    const char* value = std::getenv(("OMPI_MCA_" + parameter.name).c_str());
    if (value != nullptr && value != fmt::format("{}", parameter.value)) {
      conflicts.push_back(
          fmt::format("{} is {}, expected {}", parameter.name, value, parameter.value));
    }
  }
  return conflicts;
}

}  // namespace spmd::mpi
