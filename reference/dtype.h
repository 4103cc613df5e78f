#pragma once
// Element types of spmd::Array, named as NumPy and JAX name them.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "reference/half_float.h"

namespace spmd {

enum class DType { float64, float32, float16, bfloat16, int64, int32, int8, uint8, bool_ };

inline constexpr DType kAllDTypes[] = {DType::float64, DType::float32, DType::float16,
                                       DType::bfloat16, DType::int64,   DType::int32,
                                       DType::int8,    DType::uint8,   DType::bool_};

std::string_view dtype_name(DType dtype);       // "float32", "bool", ...
DType dtype_from_name(std::string_view name);   // throws spmd::Error naming the value
std::size_t dtype_size_bytes(DType dtype);
bool is_floating(DType dtype);  // float64 float32 float16 bfloat16
bool is_integer(DType dtype);   // int64 int32 int8 uint8 (not bool)

// The C++ type that stores one element of each dtype.
template <DType D> struct StorageOf;
template <> struct StorageOf<DType::float64> { using type = double; };
template <> struct StorageOf<DType::float32> { using type = float; };
template <> struct StorageOf<DType::float16> { using type = Float16; };
template <> struct StorageOf<DType::bfloat16> { using type = BFloat16; };
template <> struct StorageOf<DType::int64> { using type = std::int64_t; };
template <> struct StorageOf<DType::int32> { using type = std::int32_t; };
template <> struct StorageOf<DType::int8> { using type = std::int8_t; };
template <> struct StorageOf<DType::uint8> { using type = std::uint8_t; };
template <> struct StorageOf<DType::bool_> { using type = bool; };

template <class T> struct DTypeOf;
template <> struct DTypeOf<double> { static constexpr DType value = DType::float64; };
template <> struct DTypeOf<float> { static constexpr DType value = DType::float32; };
template <> struct DTypeOf<Float16> { static constexpr DType value = DType::float16; };
template <> struct DTypeOf<BFloat16> { static constexpr DType value = DType::bfloat16; };
template <> struct DTypeOf<std::int64_t> { static constexpr DType value = DType::int64; };
template <> struct DTypeOf<std::int32_t> { static constexpr DType value = DType::int32; };
template <> struct DTypeOf<std::int8_t> { static constexpr DType value = DType::int8; };
template <> struct DTypeOf<std::uint8_t> { static constexpr DType value = DType::uint8; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::bool_; };

// Calls visitor(T{}) with a value of the storage type of `dtype`; returns what it returns.
template <class Visitor>
decltype(auto) visit_dtype(DType dtype, Visitor&& visitor) {
  switch (dtype) {
    case DType::float64: return std::forward<Visitor>(visitor)(double{});
    case DType::float32: return std::forward<Visitor>(visitor)(float{});
    case DType::float16: return std::forward<Visitor>(visitor)(Float16{});
    case DType::bfloat16: return std::forward<Visitor>(visitor)(BFloat16{});
    case DType::int64: return std::forward<Visitor>(visitor)(std::int64_t{});
    case DType::int32: return std::forward<Visitor>(visitor)(std::int32_t{});
    case DType::int8: return std::forward<Visitor>(visitor)(std::int8_t{});
    case DType::uint8: return std::forward<Visitor>(visitor)(std::uint8_t{});
    case DType::bool_: return std::forward<Visitor>(visitor)(bool{});
  }
  __builtin_unreachable();
}

}  // namespace spmd
