#include "hlo/hlo_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>

#include "reference/error.h"

namespace spmd::hlo {
namespace {

// XLA's opcodes (xla/hlo/ir/hlo_opcode.h) that compute locally, costed by bytes moved (dot,
// convolution, fusion and custom-call have FLOPs too).
constexpr std::string_view kComputeOpcodes[] = {
    "abs", "add", "and", "atan2", "batch-norm-grad", "batch-norm-inference",
    "batch-norm-training", "bitcast-convert", "broadcast", "cbrt", "ceil", "cholesky", "clamp",
    "clz", "compare", "complex", "concatenate", "convert", "convolution", "copy", "copy-start",
    "copy-done", "cosine", "custom-call", "divide", "dot", "dynamic-reshape", "dynamic-slice",
    "dynamic-update-slice", "erf", "exponential", "exponential-minus-one", "fft", "floor", "fusion",
    "gather", "get-dimension-size", "imag", "iota", "is-finite", "log", "log-plus-one",
    "logistic", "map", "maximum", "minimum", "multiply", "negate", "not", "or", "pad", "popcnt",
    "power", "real", "reduce", "reduce-precision", "reduce-window", "remainder", "reshape",
    "reverse", "rng", "rng-bit-generator", "rng-get-and-update-state", "round-nearest-afz",
    "round-nearest-even", "rsqrt", "scatter", "select", "select-and-scatter",
    "set-dimension-size", "shift-left", "shift-right-arithmetic", "shift-right-logical", "sign",
    "sine", "slice", "sort", "sqrt", "stochastic-convert", "subtract", "tan", "tanh", "topk",
    "transpose", "triangular-solve", "xor", "ragged-dot", "scaled-dot"};

constexpr std::string_view kNoWorkOpcodes[] = {
    "parameter", "constant", "tuple", "get-tuple-element", "bitcast", "partition-id",
    "replica-id", "after-all", "add-dependency", "opt-barrier", "domain"};

constexpr std::string_view kCollectives[] = {
    "all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute",
    "collective-broadcast"};

template <std::size_t N>
bool listed(const std::string_view (&list)[N], std::string_view opcode) {
  return std::find(std::begin(list), std::end(list), opcode) != std::end(list);
}

std::int64_t operand_bytes(const HloModule& module, const HloComputation& computation,
                           const HloInstruction& instruction) {
  std::int64_t bytes = 0;
  for (std::size_t i = 0; i < instruction.operands.size(); ++i) {
    bytes += module.operand(computation, instruction, i).shape.bytes();
  }
  return bytes;
}

std::vector<std::int64_t> integers_of(const HloModule& module, const HloInstruction& at,
                                      std::string_view key) {
  const std::string* value = at.attribute(key);
  if (value == nullptr) return {};
  const std::optional<std::vector<std::int64_t>> numbers = attribute_integers(*value);
  if (!numbers) {
    module.fail(at, fmt::format("{} ({}): {}={}, expected a list of integers such as {{1,0}}",
                                at.name, at.opcode, key, *value));
  }
  return *numbers;
}

double contracted_flops(const HloModule& module, const HloInstruction& at, const HloShape& lhs,
                        const std::vector<std::int64_t>& contracting, std::int64_t result_elements) {
  double flops = 2.0 * static_cast<double>(result_elements);
  for (std::int64_t d : contracting) {
    if (d < 0 || static_cast<std::size_t>(d) >= lhs.dims.size()) {
      module.fail(at, fmt::format("{} ({}): contracting dimension {}, expected one of the lhs {}",
                                  at.name, at.opcode, d, lhs.to_string()));
    }
    flops *= static_cast<double>(lhs.dims[static_cast<std::size_t>(d)]);
  }
  return flops;
}

double dot_flops(const HloModule& module, const HloComputation& computation,
                 const HloInstruction& dot) {
  const HloShape& lhs = module.operand(computation, dot, 0).shape;
  return contracted_flops(module, dot, lhs, integers_of(module, dot, "lhs_contracting_dims"),
                          dot.shape.element_count());
}

// 2 × output elements × kernel elements per output feature (the kernel's 'o' dimension in
// dim_labels "b01f_01io->b01f"); grouped convolutions' kernels already hold one group's inputs.
double convolution_flops(const HloModule& module, const HloComputation& computation,
                         const HloInstruction& convolution) {
  const HloShape& kernel = module.operand(computation, convolution, 1).shape;
  const std::string* labels = convolution.attribute("dim_labels");
  const std::size_t underscore = labels == nullptr ? std::string::npos : labels->find('_');
  const std::size_t arrow = labels == nullptr ? std::string::npos : labels->find("->");
  const std::size_t o = underscore == std::string::npos || arrow == std::string::npos
                            ? std::string::npos
                            : labels->substr(underscore + 1, arrow - underscore - 1).find('o');
  if (o == std::string::npos || o >= kernel.dims.size()) {
    module.fail(convolution, fmt::format("{} (convolution): dim_labels={}, expected labels such as "
                                         "b01f_01io->b01f naming the kernel's output feature 'o'",
                                         convolution.name, labels == nullptr ? "(none)" : *labels));
  }
  const double per_output = static_cast<double>(kernel.element_count()) /
                            static_cast<double>(std::max<std::int64_t>(1, kernel.dims[o]));
  return 2.0 * static_cast<double>(convolution.shape.element_count()) * per_output;
}

// cuBLAS GEMMs that XLA's GPU compiler rewrites dots into (gemm_rewriter): the dot's dimension
// numbers are in the backend_config.
bool is_gemm_custom_call(const HloInstruction& instruction) {
  const std::string* target = instruction.attribute("custom_call_target");
  return target != nullptr && (target->find("__cublas$gemm") != std::string::npos ||
                               target->find("__cublas$lt$matmul") != std::string::npos);
}

double gemm_flops(const HloModule& module, const HloComputation& computation,
                  const HloInstruction& gemm) {
  const std::string* config = gemm.attribute("backend_config");
  const auto fail = [&] {
    module.fail(gemm, fmt::format("{} (custom-call {}): expected a backend_config with "
                                  "gemm_backend_config.dot_dimension_numbers",
                                  gemm.name, *gemm.attribute("custom_call_target")));
  };
  if (config == nullptr) fail();
  const nlohmann::json json = nlohmann::json::parse(*config, nullptr, false);
  if (json.is_discarded() || !json.contains("gemm_backend_config")) fail();
  const nlohmann::json& numbers = json["gemm_backend_config"].value("dot_dimension_numbers", nlohmann::json::object());
  std::vector<std::int64_t> contracting;
  for (const nlohmann::json& d : numbers.value("lhs_contracting_dimensions", nlohmann::json::array())) {
    contracting.push_back(d.is_string() ? std::stoll(d.get<std::string>()) : d.get<std::int64_t>());
  }
  const HloShape& result = gemm.shape.is_tuple ? gemm.shape.elements.at(0) : gemm.shape;
  return contracted_flops(module, gemm, module.operand(computation, gemm, 0).shape, contracting,
                          result.element_count());
}

double instruction_flops(const HloModule& module, const HloComputation& computation,
                         const HloInstruction& instruction) {
  if (instruction.opcode == "dot") return dot_flops(module, computation, instruction);
  if (instruction.opcode == "convolution") return convolution_flops(module, computation, instruction);
  if (instruction.opcode == "fusion") {
    return computation_flops(module, module.called_by("calls", instruction));
  }
  if (instruction.opcode == "call") {
    return computation_flops(module, module.called_by("to_apply", instruction));
  }
  if (instruction.opcode == "custom-call" && is_gemm_custom_call(instruction)) {
    return gemm_flops(module, computation, instruction);
  }
  return 0;
}

}  // namespace

std::string_view collective_opcode(std::string_view opcode) {
  if (opcode.ends_with("-start")) opcode.remove_suffix(6);
  return opcode;
}

OpKind op_kind(const HloModule& module, const HloInstruction& instruction) {
  const std::string_view opcode = instruction.opcode;
  if (listed(kNoWorkOpcodes, opcode)) return OpKind::no_work;
  if (listed(kCollectives, opcode)) return OpKind::collective;
  if (opcode == "all-reduce-start" || opcode == "all-gather-start" ||
      opcode == "collective-permute-start") {
    return OpKind::collective_start;
  }
  if (opcode == "all-reduce-done" || opcode == "all-gather-done" ||
      opcode == "collective-permute-done") {
    return OpKind::collective_done;
  }
  if (opcode == "async-start") return OpKind::async_start;
  if (opcode == "async-update") return OpKind::async_update;
  if (opcode == "async-done") return OpKind::async_done;
  if (opcode == "while") return OpKind::while_loop;
  if (opcode == "call") return OpKind::call;
  if (opcode == "conditional") return OpKind::conditional;
  if (listed(kComputeOpcodes, opcode)) return OpKind::compute;
  if (opcode == "send" || opcode == "recv" || opcode == "send-done" || opcode == "recv-done" ||
      opcode == "infeed" || opcode == "outfeed" || opcode == "ragged-all-to-all") {
    module.fail(instruction, fmt::format("{}: opcode '{}' is not supported by the importer, expected "
                                         "collectives, compute and control flow (docs/hlo-import.md)",
                                         instruction.name, opcode));
  }
  module.fail(instruction, fmt::format("{}: opcode '{}', expected an XLA opcode the importer knows "
                                       "(docs/hlo-import.md, \"Op costs\")",
                                       instruction.name, opcode));
}

ComputeCost compute_cost(const HloModule& module, const HloComputation& computation,
                         const HloInstruction& instruction) {
  ComputeCost cost;
  cost.flops = instruction_flops(module, computation, instruction);
  const std::string_view opcode = instruction.opcode;
  if (opcode == "slice" || opcode == "dynamic-slice") {
    cost.bytes = 2 * instruction.shape.bytes();
  } else if (opcode == "dynamic-update-slice") {
    cost.bytes = 2 * module.operand(computation, instruction, 1).shape.bytes();
  } else {
    cost.bytes = operand_bytes(module, computation, instruction) + instruction.shape.bytes();
  }
  return cost;
}

double computation_flops(const HloModule& module, const HloComputation& computation) {
  double flops = 0;
  for (const HloInstruction& instruction : computation.instructions) {
    flops += instruction_flops(module, computation, instruction);
  }
  return flops;
}

}  // namespace spmd::hlo
