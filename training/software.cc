#include "training/software.h"

#include <cctype>
#include <string>

#include <fmt/format.h>

#include "reference/error.h"
#include "support/name_table.h"

namespace spmd::training {
namespace {

bool contains(const std::string& text, std::string_view word) {
  return text.find(word) != std::string::npos;
}

// The earliest year from 2015 to 2039 the text names, or 0.
int first_year(const std::string& text) {
  for (std::size_t i = 0; i + 4 <= text.size(); ++i) {
    if (text[i] != '2' || text[i + 1] != '0') continue;
    if (!std::isdigit(static_cast<unsigned char>(text[i + 2])) ||
        !std::isdigit(static_cast<unsigned char>(text[i + 3]))) {
      continue;
    }
    const bool digit_before = i > 0 && std::isdigit(static_cast<unsigned char>(text[i - 1]));
    const bool digit_after =
        i + 4 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 4]));
    if (digit_before || digit_after) continue;
    const int year = std::stoi(text.substr(i, 4));
    if (year >= 2015 && year < 2040) return year;
  }
  return 0;
}

}  // namespace

std::string_view framework_name(Framework framework) {
  static constexpr NameTable<Framework, 6> kNames = {{{Framework::megatron, "Megatron"},
                                                     {Framework::torchtitan, "torchtitan"},
                                                     {Framework::llm_foundry, "llm-foundry"},
                                                     {Framework::maxtext, "MaxText"},
                                                     {Framework::pytorch, "PyTorch"},
                                                     {Framework::unknown, "unknown"}}};
  return name_in(kNames, framework);
}

Software software_from_description(std::string_view description) {
  const std::string text = ascii_lowercase(description);
  Software software;
  const int year = first_year(text);
  if (contains(text, "torchtitan")) {
    software.framework = Framework::torchtitan;
    software.fused_elementwise = contains(text, "compile");
    software.fused_cross_entropy = software.fused_elementwise;
    if (contains(text, "async")) {
      software.tensor_parallel_overlap = TensorParallelOverlap::matmul_adjacent;
    }
    software.separate_input_projections = true;
    software.kv_heads_repeated_for_attention = true;
    software.selective_recompute = SelectiveRecompute::every_second_matmul;
    software.attention_kernel = AttentionKernel::flash2;
  } else if (contains(text, "automodel")) {
    // NeMo AutoModel: PyTorch-native (FSDP2 / DTensor) training with Transformer Engine's
    // fused kernels and attention, none of Megatron's performance-recipe settings.
    software.framework = Framework::pytorch;
  } else if (contains(text, "llm-foundry") || contains(text, "composer")) {
    software.framework = Framework::llm_foundry;
    software.fused_elementwise = false;
    software.attention_kernel = AttentionKernel::flash2;
  } else if (contains(text, "maxtext") || contains(text, "pax") || contains(text, "t5x") ||
             contains(text, "jax")) {
    // MaxText and the other JAX trainers: XLA fuses the element-wise work.
    software.framework = Framework::maxtext;
  } else if (contains(text, "megatron") || contains(text, "nemo")) {
    // Before the plain PyTorch trainers: Megatron-DeepSpeed and "Megatron-LM on PyTorch" run
    // Megatron's fused kernels.
    software.framework = Framework::megatron;
    // NVIDIA's performance recipes (NeMo, Megatron-Bridge) overlap TP communication; the
    // Megatron-LM papers' runs of 2021-2022 did not.
    const bool performance_recipe = contains(text, "nemo") || contains(text, "bridge");
    if (performance_recipe) {
      software.tensor_parallel_overlap = TensorParallelOverlap::every_collective;
    }
    software.hierarchical_expert_dispatch_on_blackwell = performance_recipe;
    if (performance_recipe) software.gradient_reduce_bytes = 2;
    software.distributed_optimizer = !(year > 0 && year < 2022);
  } else if (contains(text, "deepspeed") || contains(text, "pytorch") || contains(text, "fsdp") ||
             contains(text, "hugging")) {
    // Plain PyTorch trainers (FSDP, DeepSpeed's ZeRO, Hugging Face): eager kernels, SDPA.
    software.framework = Framework::pytorch;
    software.fused_elementwise = false;
    software.fused_cross_entropy = false;
    software.attention_kernel = AttentionKernel::flash2;
  }
  if (software.framework == Framework::unknown && !text.empty()) {
    throw Error(fmt::format(
        "software '{}': expected a framework the training model knows: Megatron-LM, "
        "Megatron-Core, NeMo, Megatron-Bridge, torchtitan, llm-foundry (Composer), MaxText (or "
        "another JAX trainer), DeepSpeed or PyTorch FSDP",
        description));
  }
  if (software.framework == Framework::unknown) software.framework = Framework::megatron;
  // Flash attention (2022) entered the frameworks in 2023.
  software.flash_attention = !(year > 0 && year < 2023);
  return software;
}

}  // namespace spmd::training
