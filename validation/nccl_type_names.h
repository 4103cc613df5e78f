#pragma once
// nccl-tests' names for element types ("float", "half", "double"), the one home for them: the
// perf command prints them, and validate reads a calibration row's dtype by them.

#include <optional>
#include <string>
#include <string_view>

#include "reference/dtype.h"

namespace spmd {

// nccl-tests' name of `dtype`: float, double and half for float32, float64 and float16; the
// dtype's own name otherwise (bfloat16, int8, ...).
std::string nccl_type_name(DType dtype);

// The dtype of an nccl-tests type name or a dtype's own name (float, half, bfloat16, float32,
// int8, ...; the text's first word, in any case); none for other text.
std::optional<DType> dtype_of_nccl_type(std::string_view text);

// The size of one element of a dtype a calibration row names, by the text's first word (the text
// trimmed) in any case: nccl-tests' names and the dtypes' own (float, float32, half, bfloat16,
// double, int8, ...), and the types nccl-tests has beyond the simulator's (uint32, uint64, the
// fp8 formats) or their common short names (fp32, fp16, bf16, int, char). None for any other
// text.
std::optional<int> nccl_type_bytes(std::string_view text);

}  // namespace spmd
