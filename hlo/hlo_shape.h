#pragma once
// The shape of an HLO value as the HLO text writes it: an array ("f32[16,32]{1,0}": element
// type, dimensions, layout) or a tuple of shapes ("(f32[4], s32[])"). The layout is read past and
// not kept: it does not change a buffer's bytes.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reference/array.h"
#include "reference/dtype.h"

namespace spmd::hlo {

struct HloShape {
  bool is_tuple = false;
  std::string element_type;          // arrays: "f32", "bf16", "pred", "s32", "token", ...
  std::vector<std::int64_t> dims;    // arrays
  std::vector<HloShape> elements;    // tuples

  std::int64_t element_count() const;  // arrays: the product of the dimensions; tuples: 0
  // The data's bytes: arrays, elements × width (4-bit types packed two to a byte); tuples, the sum
  // of their elements' (the tuple's own pointer table not included: see tuple_table_bytes).
  std::int64_t bytes() const;
  // The arrays of this shape, depth first (an array: itself).
  std::vector<const HloShape*> leaves() const;
  std::string to_string() const;  // "f32[16,32]", "(f32[4], s32[])"
};

// XLA's pointer table of a tuple buffer: 8 bytes per element (ShapeUtil::ByteSizeOf with
// pointer size 8, as XLA's CPU and GPU buffer assignment count it).
std::int64_t tuple_table_bytes(const HloShape& tuple);

// The width in bits of an element type ("f32" 32, "pred" 8, "s4" 4, "token" 0); nullopt for a
// name HLO does not have.
std::optional<int> element_type_bits(std::string_view element_type);

// The spmd dtype that times a collective of this element type: the same type where spmd has it,
// otherwise one of the same width (a collective's time depends on its bytes, not on the type).
// nullopt for types no dtype has the width of (4-bit types, token).
std::optional<DType> timing_dtype(std::string_view element_type);

// Reads one shape from the front of `text` and advances `text` past it (and past a layout).
// spmd::Error (without a location: the caller adds it) for text that is no shape.
HloShape read_hlo_shape(std::string_view& text);

}  // namespace spmd::hlo
