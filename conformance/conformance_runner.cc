#include "conformance/conformance_runner.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "reference/elementwise.h"
#include "reference/reference_backend.h"
#include "backends/backend_registry.h"

namespace spmd::conformance {
namespace {

std::string index_string(const Shape& shape, std::int64_t flat) {
  Shape index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return shape_to_string(index);
}

bool element_equal(const Array& a, const Array& b, std::int64_t i) {
  const std::size_t size = dtype_size_bytes(a.dtype());
  const auto offset = static_cast<std::size_t>(i) * size;
  if (std::memcmp(a.bytes().data() + offset, b.bytes().data() + offset, size) == 0) return true;
  return is_floating(a.dtype()) && std::isnan(a.element_as_double(i)) &&
         std::isnan(b.element_as_double(i));  // NaN payloads aside
}

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

Values run_on(Backend& backend, const Case& c) {
  const DeviceFunction body = body_function(c);
  return c.is_pmap ? run_pmap(backend, body, c.pmap, c.inputs)
                   : run_shard_map(backend, c.mesh, body, c.shard_map, c.inputs);
}

// Compares outputs; fills result.failure with the first difference.
void compare(const Values& got, const Values& expected, CaseResult& result,
             const std::string& against) {
  for (std::size_t j = 0; j < expected.size(); ++j) {
    Array want = expected[j];
    if (auto narrowed = narrowed_expected(got[j], want)) {
      result.notes.push_back("expected output " + std::to_string(j) + " is stored as " +
                             std::string(dtype_name(want.dtype())) +
                             "; compared as " + std::string(dtype_name(got[j].dtype())) +
                             " (JAX with x64 off returns " + got[j].type_string() +
                             "; every value fits)");
      want = *narrowed;
    }
    if (auto diff = first_difference(got[j], want)) {
      result.failure = "output " + std::to_string(j) + " " + *diff + " (" + against + ")";
      return;
    }
  }
}

}  // namespace

std::optional<std::string> first_difference(const Array& got, const Array& expected) {
  if (got.dtype() != expected.dtype() || got.shape() != expected.shape()) {
    return "is " + got.type_string() + ", expected " + expected.type_string();
  }
  for (std::int64_t i = 0; i < got.size(); ++i) {
    if (element_equal(got, expected, i)) continue;
    char got_text[64], want_text[64];
    std::snprintf(got_text, sizeof got_text, "%.9g", got.element_as_double(i));
    std::snprintf(want_text, sizeof want_text, "%.9g", expected.element_as_double(i));
    return "element " + index_string(got.shape(), i) + " is " + got_text + ", expected " +
           want_text;
  }
  return std::nullopt;
}

CaseResult run_case(const Case& c, const RunOptions& options) {
  CaseResult result{.name = c.name};
  ReductionOrder case_order{.algorithm = c.order};
  const ReductionOrder order = options.order.value_or(case_order);
  const bool same_order = order.algorithm == c.order && order.ring.empty();
  try {
    auto backend = make_backend(options.backend, order, c.mesh.device_count());
    const Values got = run_on(*backend, c);
    if (c.expected_error) {
      result.failure = "ran without error, expected an error (" + *c.expected_error + ")";
      return result;
    }
    if (got.size() != c.expected_outputs->size()) {
      result.failure = "returned " + std::to_string(got.size()) + " outputs, expected " +
                       std::to_string(c.expected_outputs->size());
      return result;
    }
    compare(got, *c.expected_outputs, result, "JAX's expected output");
    if (!same_order && result.failure.empty()) {
      // Float sums in another order than JAX's: JAX's file holds for everything but them, so
      // compare with the reference run in the backend's own order.
      result.notes.push_back("reductions fold in " + order.describe() +
                             ", compared with the reference in that order");
    }
  } catch (const Error& e) {
    if (c.expected_error) result.notes.push_back(std::string("rejected as expected: ") + e.what());
    else result.failure = std::string("raised an error: ") + e.what();
  }
  if (!same_order && !result.failure.empty() && !c.expected_error) {
    // Retry against the reference folding in the backend's order.
    const std::string jax_failure = result.failure;
    result.failure.clear();
    try {
      ReferenceBackend reference(order, c.mesh.device_count());
      auto backend = make_backend(options.backend, order, c.mesh.device_count());
      compare(run_on(*backend, c), run_on(reference, c), result,
              "the reference in " + order.describe() + " order");
    } catch (const Error& e) {
      result.failure = std::string("raised an error: ") + e.what();
    }
    if (result.failure.empty()) {
      result.notes.push_back("differs from JAX (" + jax_failure + ") only by the reduction order " +
                             order.describe() + "; equal to the reference in that order");
    }
  }
  result.passed = result.failure.empty();
  return result;
}

std::vector<std::string> find_case_files(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    if (fs::is_regular_file(path)) {
      files.push_back(path);
    } else if (fs::is_directory(path)) {
      for (const auto& entry : fs::recursive_directory_iterator(path)) {
        if (entry.is_regular_file() && entry.path().extension() == ".json") {
          files.push_back(entry.path().string());
        }
      }
    } else {
      throw Error("PATH " + path + " does not exist, expected a case file or a folder of cases");
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace spmd::conformance
