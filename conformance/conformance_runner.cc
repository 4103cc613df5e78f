#include "conformance/conformance_runner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "backends/backend_registry.h"
#include "conformance/unspecified_order.h"
#include "reference/array_difference.h"
#include "reference/elementwise.h"
#include "reference/input_file.h"
#include "reference/reference_backend.h"

namespace spmd::conformance {
namespace {

// An expected file whose dtype is the 64-bit twin of the output's, with values that fit it:
// JAX with x64 off cannot return 64-bit arrays, so such a file was written through NumPy's
// promotion (np.sum of int32 gives int64); compare the values in the output's dtype.
std::optional<Array> narrowed_expected(const Array& got, const Array& expected) {
  const bool twins = (expected.dtype() == DType::int64 && got.dtype() == DType::int32) ||
                     (expected.dtype() == DType::float64 && got.dtype() == DType::float32);
  if (!twins) return std::nullopt;
  const Array narrowed = convert(expected, got.dtype());
  if (!convert(narrowed, expected.dtype()).bitwise_equal(expected)) return std::nullopt;
  return narrowed;
}

// Compares outputs; fills result.failure with the first difference.
void compare(const Values& got, const Values& expected, CaseResult& result,
             const std::string& against) {
  for (std::size_t j = 0; j < expected.size(); ++j) {
    Array want = expected[j];
    if (auto narrowed = narrowed_expected(got[j], want)) {
      result.notes.push_back(fmt::format(
          "expected output {} is stored as {}; compared as {} (JAX with x64 off returns {}; "
          "every value fits)",
          j, dtype_name(want.dtype()), dtype_name(got[j].dtype()), got[j].type_string()));
      want = *narrowed;
    }
    if (auto diff = first_difference(got[j], want)) {
      result.failure = fmt::format("output {} {} ({})", j, *diff, against);
      return;
    }
  }
}

// An error raised while building or running the case's program: the case's result when it
// expects one, else its failure.
void record_error(const Case& c, const std::string& error, CaseResult& result) {
  if (c.expected_error) result.notes.push_back(fmt::format("rejected as expected: {}", error));
  else result.failure = fmt::format("raised an error: {}", error);
}

// Runs the case on `backend_name` folding in `order`, compared with JAX's expected outputs.
// Returns the outputs when the run gave as many as JAX's file has.
std::optional<Values> compare_with_jax(const Case& c, const std::string& backend_name,
                                       const ReductionOrder& order, CaseResult& result) {
  // A backend that cannot run the case (Open MPI started with too few ranks) is a failure even
  // for a case that expects an error: that error is not the one the case means.
  std::unique_ptr<Backend> backend;
  try {
    backend = make_backend(backend_name, order, c.device_count);
  } catch (const Error& e) {
    result.failure = fmt::format("backend {} cannot run the case: {}", backend_name, e.what());
    return std::nullopt;
  }
  try {
    Values got = run_body(*backend, c);
    if (c.expected_error) {
      result.failure = fmt::format("ran without error, expected an error ({})", *c.expected_error);
      return std::nullopt;
    }
    if (got.size() != c.expected_outputs->size()) {
      result.failure =
          fmt::format("returned {} outputs, expected {}", got.size(), c.expected_outputs->size());
      return std::nullopt;
    }
    compare(got, *c.expected_outputs, result, "JAX's expected output");
    return got;
  } catch (const Error& e) {
    record_error(c, e.what(), result);
    return std::nullopt;
  }
}

// Whether the reference, folding in the case's own order, gives JAX's expected outputs.
bool reference_gives_jax_outputs(const Case& c) {
  CaseResult reference_result;
  compare_with_jax(c, "reference", c.order, reference_result);
  return reference_result.failure.empty();
}

// Under another order than the case's, JAX's file holds for everything but float sums. A JAX
// mismatch is excused only where the order is its cause: the reference in the case's own order
// gives JAX's outputs, and the backend's outputs `got` (none when its run failed) are the
// reference's in the backend's order.
void compare_in_backend_order(const Case& c, const std::optional<Values>& got,
                              const ReductionOrder& order, CaseResult& result) {
  if (result.failure.empty()) {
    result.notes.push_back(fmt::format(
        "reductions fold in {}, compared with the reference in that order", order.describe()));
    return;
  }
  const std::string jax_failure = result.failure;
  if (!reference_gives_jax_outputs(c)) {
    result.failure = fmt::format(
        "{}; not a reduction-order difference: the reference in the case's own order {} differs "
        "from JAX too",
        jax_failure, c.order.describe());
    return;
  }
  if (!got) return;  // the backend's own error or output count stands
  result.failure.clear();
  try {
    ReferenceBackend reference(order, c.device_count);
    compare(*got, run_body(reference, c), result,
            fmt::format("the reference in {} order", order.describe()));
  } catch (const Error& e) {
    result.failure = fmt::format("raised an error: {}", e.what());
  }
  if (result.failure.empty()) {
    result.notes.push_back(fmt::format(
        "differs from JAX ({}) only by the reduction order {}; equal to the reference in that "
        "order",
        jax_failure, order.describe()));
  }
}

// In an unspecified order (result.order_unspecified: the case's own `order` or the run's
// --order is one) the case's bits are defined only where every reduction is exact in any order.
// Sets result.error, and returns false, for a case whose data are not.
bool bits_defined_in_unspecified_order(const Case& c, const ReductionOrder& run_order,
                                       CaseResult& result) {
  if (!result.order_unspecified || c.expected_error) return true;  // no bits to compare
  const bool case_order_unspecified = order_is_unspecified(c.order.algorithm);
  const ReductionOrder& unspecified = case_order_unspecified ? c.order : run_order;
  const auto inexact = first_reduction_not_exact_in_any_order(c, unspecified);
  if (!inexact) return true;
  result.error = fmt::format(
      "{}: {} {}: its inputs' {} is not exact in every order ({} over devices {}, element {}), "
      "so the case's bits are not defined; expected data whose reductions are exact in any "
      "order (docs/reduction-orders.md, \"In-switch reductions\")",
      c.json_path.empty() ? c.name : c.json_path, case_order_unspecified ? "order:" : "--order",
      reduction_algorithm_name(unspecified.algorithm), reduce_op_name(inexact->op),
      inexact->collective, fmt::join(inexact->devices, ","), inexact->element);
  return false;
}

}  // namespace

CaseResult run_case(const Case& c, const RunOptions& options) {
  CaseResult result{.name = c.name};
  const ReductionOrder order = options.order.value_or(c.order);
  result.order_unspecified =
      order_is_unspecified(c.order.algorithm) || order_is_unspecified(order.algorithm);
  if (c.program_error) {
    record_error(c, *c.program_error, result);  // JAX rejects the program before it runs
  } else if (bits_defined_in_unspecified_order(c, order, result)) {
    const std::optional<Values> got = compare_with_jax(c, options.backend, order, result);
    if (order != c.order && !c.expected_error) compare_in_backend_order(c, got, order, result);
  }
  if (result.order_unspecified && result.error.empty() && !c.expected_error && !c.program_error) {
    result.notes.push_back(
        "order unspecified (in_switch): compared bit for bit on data whose reductions are exact "
        "in every order");
  }
  result.passed = result.failure.empty() && result.error.empty();
  return result;
}

std::vector<std::string> find_case_files(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code error;  // a path too long or looping is no case either
    const fs::file_type type = fs::status(path, error).type();
    if (type == fs::file_type::regular) {
      files.push_back(path);
      continue;
    }
    if (type != fs::file_type::directory) {
      throw Error(fmt::format("PATH {}: {}, expected a case file or a folder of cases",
                              path_for_message(path),
                              error ? error.message() : std::string("no such file or folder")));
    }
    const std::size_t before = files.size();
    for (auto entry = fs::recursive_directory_iterator(path, error);
         !error && entry != fs::recursive_directory_iterator(); entry.increment(error)) {
      if (entry->is_regular_file(error) && entry->path().extension() == ".json") {
        files.push_back(entry->path().string());
      }
    }
    if (error) {
      throw Error(fmt::format("PATH {}: cannot list the folder ({})", path_for_message(path),
                              error.message()));
    }
    if (files.size() == before) {
      throw Error(fmt::format("PATH {}: a folder with no .json case files, expected cases",
                              path_for_message(path)));
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace spmd::conformance
