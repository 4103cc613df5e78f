#include "training/training_job.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "reference/error.h"
#include "support/name_table.h"

namespace spmd::training {

std::string_view recompute_name(Recompute recompute) {
  static constexpr NameTable<Recompute, 5> kNames = {{{Recompute::none, "none"},
                                                     {Recompute::selective, "selective"},
                                                     {Recompute::mlp, "mlp"},
                                                     {Recompute::full, "full"},
                                                     {Recompute::offload, "offload"}}};
  return name_in(kNames, recompute);
}

Recompute recompute_from_text(const std::string& text, std::string_view where) {
  if (text.starts_with("full")) return Recompute::full;
  if (text.starts_with("selective")) return Recompute::selective;
  // MaxText's "minimal" keeps the matmuls' results and recomputes what lies between them.
  if (text.starts_with("minimal")) return Recompute::mlp;
  if (text.starts_with("none")) return Recompute::none;
  // Megatron-Core's cpu_offloading of activations, DeepSpeed's activation CPU offload.
  if (text.find("offload") != std::string::npos) return Recompute::offload;
  throw Error(fmt::format("{}: recompute '{}': expected none, selective, minimal, full or offload",
                          where, text));
}

StageParameters stage_parameters(const TrainingJob& job) {
  const ModelShape& m = job.model;
  const ParallelLayout& l = job.layout;
  const double layers_per_rank = std::ceil(static_cast<double>(m.layers) / l.pipeline);
  const double moe_share = static_cast<double>(m.moe_layers()) / static_cast<double>(m.layers);
  StageParameters p;
  p.dense_per_layer = static_cast<double>(attention_parameters(m));
  if (m.moe) {
    const MixtureOfExperts& moe = *m.moe;
    const std::int64_t dense_ff = moe.dense_d_ff > 0 ? moe.dense_d_ff : m.d_ff;
    p.dense_per_layer += (1 - moe_share) * static_cast<double>(dense_mlp_parameters(m, dense_ff)) +
                         moe_share * static_cast<double>(moe.shared_experts) *
                             static_cast<double>(expert_parameters(m));
    p.expert = layers_per_rank * moe_share * static_cast<double>(moe.experts) *
               static_cast<double>(expert_parameters(m)) / l.expert;
  } else {
    p.dense_per_layer += static_cast<double>(dense_mlp_parameters(m, m.d_ff));
  }
  p.dense = (layers_per_rank * p.dense_per_layer + static_cast<double>(embedding_parameters(m))) /
            l.tensor;
  return p;
}

void check_training_job(const TrainingJob& job, std::string_view where) {
  check_model_shape(job.model, where);
  const ParallelLayout& l = job.layout;
  auto fail = [&](std::string_view field, std::int64_t value, const std::string& expected) {
    throw Error(fmt::format("{}: {} {}: expected {}", where, field, value, expected));
  };
  for (const auto& [field, degree] :
       {std::pair<std::string_view, int>{"dp", l.data}, {"tp", l.tensor}, {"pp", l.pipeline},
        {"cp", l.context}, {"ep", l.expert}, {"vp", l.virtual_stages}, {"fsdp", l.fsdp}}) {
    if (degree < 1) fail(field, degree, "a positive integer");
    // Each degree at most the devices (the readers cap both at 2^24), so that the products
    // below stay far inside 64 bits.
    if (degree > std::max(l.devices, 1 << 24)) {
      fail(field, degree, fmt::format("at most {}", std::max(l.devices, 1 << 24)));
    }
  }
  // In floating point: four degrees of up to 2^24 overflow 64 bits.
  const double product = static_cast<double>(l.data) * l.tensor * l.pipeline * l.context;
  if (product != l.devices) {
    fail("dp", l.data,
         fmt::format("dp x tp x pp x cp = gpus_total ({}), got {} x {} x {} x {} = {:.0f}",
                     l.devices, l.data, l.tensor, l.pipeline, l.context, product));
  }
  if (l.fsdp > std::int64_t{l.data} * l.context) {
    fail("fsdp", l.fsdp, fmt::format("at most dp x cp ({})", std::int64_t{l.data} * l.context));
  }
  if (job.model.heads % l.tensor != 0) {
    fail("tp", l.tensor, fmt::format("a divisor of heads ({})", job.model.heads));
  }
  // Each model chunk holds a layer at least; Megatron may count the embedding and the loss as
  // layers (account_for_embedding_in_pipeline_split, ..._loss_...): 126 layers on 128 chunks.
  if (job.model.layers + 2 < std::int64_t{l.pipeline} * l.virtual_stages) {
    fail("pp", l.pipeline,
         fmt::format("at most (layers + 2) / vp (({} + 2) / {})", job.model.layers,
                     l.virtual_stages));
  }
  if (job.model.moe) {
    if (job.model.moe->experts % l.expert != 0) {
      fail("ep", l.expert, fmt::format("a divisor of moe_experts ({})", job.model.moe->experts));
    }
    const std::int64_t expert_room = std::int64_t{l.data} * l.context * l.tensor;
    if (expert_room % l.expert != 0) {
      fail("ep", l.expert, fmt::format("a divisor of dp x cp x tp ({})", expert_room));
    }
  } else if (l.expert != 1) {
    fail("ep", l.expert, "1 for a model without experts");
  }
  if (job.batch.sequence <= 0 || job.batch.sequence > 100'000'000) {
    fail("seq_len", job.batch.sequence, "a positive integer of at most 100000000");
  }
  if (job.batch.global_sequences > 1'000'000'000) {
    fail("global_batch_seqs", job.batch.global_sequences, "at most 1000000000");
  }
  if (job.batch.sequence % l.context != 0) {
    fail("seq_len", job.batch.sequence, fmt::format("a multiple of cp ({})", l.context));
  }
  if (job.batch.micro_batch_sequences <= 0 || job.batch.micro_batch_sequences > 1'000'000'000) {
    fail("micro_batch", job.batch.micro_batch_sequences, "a positive integer of at most 1000000000");
  }
  const std::int64_t per_step = std::int64_t{l.data} * job.batch.micro_batch_sequences;
  if (job.batch.global_sequences <= 0 || job.batch.global_sequences % per_step != 0) {
    fail("global_batch_seqs", job.batch.global_sequences,
         fmt::format("a positive multiple of dp x micro_batch ({} x {})", l.data,
                     job.batch.micro_batch_sequences));
  }
}

}  // namespace spmd::training
