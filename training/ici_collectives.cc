#include "training/ici_collectives.h"

#include <algorithm>
#include <cmath>

namespace spmd::training {
namespace {

// One ICI hop (the machine presets' kIciHopLatency) and the share of a link's rate a ring's
// data reaches, as the GPU fabrics' rings (cost_model's documented efficiencies are 0.7-0.93).
constexpr double kHopLatencySeconds = 1e-6;
constexpr double kLinkEfficiency = 0.85;

// The torus axes a group of `ranks` chips `stride` apart spans: the axes from the one its
// stride starts in to the one its last chip reaches.
int axes_spanned(const Accelerator& tpu, int ranks, int stride) {
  const double side = tpu.torus_side;
  const double first = std::floor(std::log(static_cast<double>(stride)) / std::log(side) + 1e-9);
  const double last =
      std::ceil(std::log(static_cast<double>(stride) * ranks) / std::log(side) - 1e-9);
  return std::clamp(static_cast<int>(last - first), 1, tpu.torus_dimensions);
}

}  // namespace

double ici_collective_seconds(const Accelerator& tpu, cost_model::TimedOp op, double bytes,
                              int ranks, int stride) {
  using cost_model::TimedOp;
  if (ranks <= 1 || bytes <= 0) return 0;
  const int axes = axes_spanned(tpu, ranks, stride);
  const double ring_bytes_per_s = 2.0 * axes * tpu.ici_link_bytes_per_s * kLinkEfficiency;
  const double share = static_cast<double>(ranks - 1) / ranks;
  // Hops around the rings of the spanned axes: about n^(1/axes) a ring, both directions.
  const double hops = axes * std::ceil(std::pow(static_cast<double>(ranks), 1.0 / axes) / 2);
  switch (op) {
    case TimedOp::all_reduce:
      return 2 * (share * bytes / ring_bytes_per_s + hops * kHopLatencySeconds);
    case TimedOp::all_gather:
    case TimedOp::reduce_scatter:
    case TimedOp::all_to_all:
    case TimedOp::broadcast:
      return share * bytes / ring_bytes_per_s + hops * kHopLatencySeconds;
    case TimedOp::permute:
      return bytes / (tpu.ici_link_bytes_per_s * kLinkEfficiency) + kHopLatencySeconds;
  }
  return 0;
}

}  // namespace spmd::training
