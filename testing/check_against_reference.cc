#include "testing/check_against_reference.h"

#include <fmt/format.h>
#include <rapidcheck.h>

#include <optional>

#include "reference/array_difference.h"
#include "reference/error.h"
#include "reference/reference_backend.h"

namespace spmd::testkit {
namespace {

// A run's outputs, or the spmd::Error that rejected the program.
struct Outcome {
  std::optional<Values> outputs;
  std::string error;
};

Outcome outcome_of(Backend& backend, const Program& program) {
  try {
    return {.outputs = run_program(backend, program)};
  } catch (const Error& e) {
    return {.error = e.what()};
  }
}

std::string compare_outputs(const Program& program, const Values& got, const Values& expected,
                            const std::string& against) {
  if (got.size() != expected.size()) {
    return fmt::format("returned {} outputs, expected {} ({})", got.size(), expected.size(),
                       against);
  }
  for (std::size_t j = 0; j < got.size(); ++j) {
    const int output = static_cast<int>(j);
    if (got[j].dtype() != expected[j].dtype() || got[j].shape() != expected[j].shape()) {
      return fmt::format("output {} is {}, expected {} ({})", output, got[j].type_string(),
                         expected[j].type_string(), against);
    }
    const std::optional<std::int64_t> flat = first_differing_element(got[j], expected[j]);
    if (!flat) continue;
    const Shape index = element_index(got[j].shape(), *flat);
    return fmt::format(
        "output {} element {} ({}) is {:.9g}, expected {:.9g} ({})", output, shape_to_string(index),
        device_element(program, output, got[j].shape(), index), got[j].element_as_double(*flat),
        expected[j].element_as_double(*flat), against);
  }
  return "";
}

}  // namespace

std::string difference_from_reference(Backend& backend, const Program& program,
                                      const ReductionOrder& order) {
  ReferenceBackend reference(order, backend.device_count());
  const std::string against = fmt::format("the reference in {} order", order.describe());
  const Outcome expected = outcome_of(reference, program);
  const Outcome got = outcome_of(backend, program);
  if (!expected.outputs && !got.outputs) return "";
  if (!expected.outputs) {
    return fmt::format("backend '{}' ran the program, but {} rejects it: {}", backend.name(),
                       against, expected.error);
  }
  if (!got.outputs) {
    return fmt::format("backend '{}' rejected the program ({}), but {} runs it", backend.name(),
                       got.error, against);
  }
  return compare_outputs(program, *got.outputs, *expected.outputs, against);
}

void rc_assert_matches_reference(Backend& backend, const Program& program,
                                 const ReductionOrder& order) {
  const std::string difference = difference_from_reference(backend, program, order);
  if (!difference.empty()) RC_FAIL(difference);
}

}  // namespace spmd::testkit
