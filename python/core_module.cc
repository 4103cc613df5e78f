// spmdsim._core: the native half of the Python package (docs/python.md). spmd::Error, bad input
// one line long, becomes ValueError with that line; anything else keeps nanobind's mapping.

#include <fmt/format.h>
#include <nanobind/nanobind.h>

#include <cstring>
#include <string>

#include "python/bindings.h"
#include "reference/dtype.h"
#include "reference/error.h"

namespace nb = nanobind;

namespace spmd::python {

Array array_from_wire(const WireArray& wire, const std::string& argument) {
  const auto& [dtype_text, shape, data] = wire;
  DType dtype;
  try {
    dtype = dtype_from_name(dtype_text);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", argument, e.what()));
  }
  for (std::int64_t dim : shape) {
    if (dim < 0) throw Error(fmt::format("{}: dimension {}, expected >= 0", argument, dim));
  }
  const std::size_t expected_bytes =
      static_cast<std::size_t>(element_count(shape)) * dtype_size_bytes(dtype);
  if (data.size() != expected_bytes) {
    throw Error(fmt::format("{}: {} bytes for {}{}, expected {}", argument, data.size(),
                            dtype_text, shape_string(shape), expected_bytes));
  }
  std::vector<std::byte> bytes(data.size());
  if (!bytes.empty()) std::memcpy(bytes.data(), data.c_str(), bytes.size());
  return Array::from_bytes(dtype, shape, std::move(bytes));
}

WireArray array_to_wire(const Array& array) {
  const auto bytes = array.bytes();
  return {std::string(dtype_name(array.dtype())), array.shape(),
          nb::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size())};
}

}  // namespace spmd::python

NB_MODULE(_core, module) {
  module.doc() = "spmdsim's C++ core: the reference collectives, conformance cases, HLO import";
  nb::register_exception_translator([](const std::exception_ptr& error, void*) {
    try {
      std::rethrow_exception(error);
    } catch (const spmd::Error& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  spmd::python::bind_collective(module);
  spmd::python::bind_conform(module);
  spmd::python::bind_estimate(module);
  spmd::python::bind_sharding(module);
  spmd::python::bind_multi_process(module);
}
