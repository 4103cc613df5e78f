#include "training/precision.h"

#include <fmt/format.h>

#include <string>

#include "reference/error.h"
#include "support/name_table.h"

namespace spmd::training {

namespace {

constexpr NameTable<MatmulPrecision, 4> kPrecisionNames = {{{MatmulPrecision::bf16, "bf16"},
                                                          {MatmulPrecision::fp8, "fp8"},
                                                          {MatmulPrecision::mxfp8, "mxfp8"},
                                                          {MatmulPrecision::nvfp4, "nvfp4"}}};

}  // namespace

std::string_view precision_name(MatmulPrecision precision) {
  return name_in(kPrecisionNames, precision);
}

double operand_bytes(MatmulPrecision precision) {
  switch (precision) {
    case MatmulPrecision::bf16: return 2;
    case MatmulPrecision::fp8:
    case MatmulPrecision::mxfp8: return 1;
    case MatmulPrecision::nvfp4: return 0.5;
  }
  return 2;
}

MatmulPrecision precision_from_description(std::string_view text) {
  const std::string lower = ascii_lowercase(text);
  // The earliest format named wins: "bf16 activations/matmuls, fp32 weights" is bf16.
  struct Named {
    std::string_view word;
    MatmulPrecision precision;
  };
  constexpr Named kNames[] = {{"nvfp4", MatmulPrecision::nvfp4}, {"mxfp8", MatmulPrecision::mxfp8},
                              {"fp8", MatmulPrecision::fp8},     {"bf16", MatmulPrecision::bf16},
                              {"fp16", MatmulPrecision::bf16},   {"mixed", MatmulPrecision::bf16}};
  std::size_t best_at = std::string::npos;
  MatmulPrecision best = MatmulPrecision::bf16;
  for (const Named& named : kNames) {
    const std::size_t at = lower.find(named.word);
    // "mxfp8" contains "fp8": on a tie at the same word the longer name was tried first.
    if (at != std::string::npos && (best_at == std::string::npos || at < best_at)) {
      best_at = at;
      best = named.precision;
    }
  }
  if (best_at == std::string::npos) {
    throw Error(fmt::format("precision '{}': expected bf16, fp16, fp8, mxfp8 or nvfp4", text));
  }
  return best;
}

}  // namespace spmd::training
