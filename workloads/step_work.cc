#include "workloads/step_work.h"

namespace spmd {

StepWork work_per_step(const Workload& workload, int devices) {
  switch (workload.kind) {
    case WorkloadKind::mlp_data_parallel:
      return {static_cast<double>(workload.batch_per_device) * devices, "samples"};
    case WorkloadKind::transformer_layer: {
      // batch_per_device sequences on each data shard; devices / model_parallel shards.
      const double data_shards = static_cast<double>(devices) / workload.model_parallel;
      return {static_cast<double>(workload.batch_per_device * workload.sequence) * data_shards,
              "tokens"};
    }
    case WorkloadKind::transformer:
      // The global batch is fixed: more devices share the same tokens (strong scaling).
      return {static_cast<double>(workload.transformer.global_batch * workload.transformer.sequence),
              "tokens"};
    case WorkloadKind::collectives:
      return {};
  }
  return {};
}

}  // namespace spmd
