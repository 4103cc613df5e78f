#pragma once
// Activation offload (docs/training-model.md, "Recompute and offload"): each layer's
// activations copied to host memory during the forward pass and back before its backward
// (Megatron-Core's cpu_offloading of activations, DeepSpeed's activation-checkpoint CPU offload),
// over the GPU's link to its host, beside the neighbouring layer's compute.

#include "cost_model/fabric.h"

namespace spmd::training {

// One direction of the link between a GPU and its host's memory: NVLink-C2C on Grace hosts,
// PCIe x16 (Gen3 on Volta, Gen4 on Ampere and CDNA2, Gen5 after) on x86 hosts.
double host_link_bytes_per_s(cost_model::GpuGeneration generation, cost_model::HostKind host);

// Seconds a layer's offload adds to its micro-batch: the copy out runs beside the next layer's
// forward and the copy back beside the later layer's backward, so only what each copy takes
// beyond that compute shows.
double exposed_offload_seconds(double layer_activation_bytes, double layer_forward_s,
                               double layer_backward_s, double link_bytes_per_s);

}  // namespace spmd::training
