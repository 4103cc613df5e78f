#include "reference/dtype.h"

#include "reference/error.h"

namespace spmd {

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::float64: return "float64";
    case DType::float32: return "float32";
    case DType::float16: return "float16";
    case DType::bfloat16: return "bfloat16";
    case DType::int64: return "int64";
    case DType::int32: return "int32";
    case DType::int8: return "int8";
    case DType::uint8: return "uint8";
    case DType::bool_: return "bool";
  }
  __builtin_unreachable();
}

DType dtype_from_name(std::string_view name) {
  for (DType dtype : kAllDTypes) {
    if (dtype_name(dtype) == name) return dtype;
  }
  throw Error("dtype \"" + std::string(name) +
              "\" is not known, expected one of float64 float32 float16 bfloat16 int64 int32 "
              "int8 uint8 bool");
}

std::size_t dtype_size_bytes(DType dtype) {
  return visit_dtype(dtype, [](auto tag) { return sizeof(tag); });
}

bool is_floating(DType dtype) {
  return dtype == DType::float64 || dtype == DType::float32 || dtype == DType::float16 ||
         dtype == DType::bfloat16;
}

bool is_integer(DType dtype) {
  return dtype == DType::int64 || dtype == DType::int32 || dtype == DType::int8 ||
         dtype == DType::uint8;
}

}  // namespace spmd
