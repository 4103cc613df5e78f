#include "reference/half_float.h"

#include "reference/half_float_bits.h"

namespace spmd {

BFloat16 BFloat16::from_float(float value) { return BFloat16{half_bits::bfloat16_from_float(value)}; }

float BFloat16::to_float() const { return half_bits::float_from_bfloat16(bits); }

Float16 Float16::from_float(float value) { return Float16{half_bits::float16_from_float(value)}; }

float Float16::to_float() const { return half_bits::float_from_float16(bits); }

}  // namespace spmd
