#pragma once
// The worked examples of the JAX tutorials of docs/examples.md, written against spmd::pmap /
// shard_map / Context. Each returns what the tutorial prints, so `spmdsim examples` can print it
// and tests/seed_examples_test.cc can check the printed numbers. Where a tutorial feeds random
// data (np.random.rand, jax.random.normal) the example uses arange-like data instead, so the
// results are exact and the same everywhere.
//
// Tutorials, numbered as in docs/examples.md: 000 "Day 015: Introduction to JAX's Parallelism
// with jax.pmap"; 001 "Aurora Chapter 1.2: Single-Host Sharding with jax.pmap"; 002
// "14_pmap_basics.ipynb"; 003 "Data Parallelism with pmap" (Flax NNX); 004 "Distributed JAX and
// JAX Parallelism Documentation".

#include <string>

#include "reference/backend.h"

namespace spmd::seeds {

// 001 §1: jax.pmap(scale, in_axes=(0, 0), axis_name='i') on 4 devices, x = arange(16) as (4, 4)
// float32, scale factors [10, 20, 30, 40].
struct ScaleExample {
  Array x, factors, result;
};
ScaleExample pmap_scale(Backend& backend);

// 001 §2-§4 and §6 on arange data: global (32, 3) reshaped to (4, 8, 3); in_axes=(0, None) with
// a replicated scalar 5.0 (sum over the per-device batch); a per-device scalar stacked by
// out_axes=0; a constant 42.0 returned once by out_axes=None; the in_axes example again on
// devices [0, 1] only.
struct InOutAxesExample {
  Array global_data;      // (32, 3)
  Array prepared;         // (4, 8, 3)
  Array param;            // 5.0
  Array per_device_sums;  // (4, 3): sum(data_shard * param, axis=0)
  Array scalar_sums;      // (4,):   sum(data_shard * param)
  Array identical;        // ():     42.0 via out_axes=None
  Array subset_result;    // (2, 3): devices=[0, 1]
};
InOutAxesExample pmap_in_out_axes(Backend& backend);

// 001 §5: static_broadcasted_argnums=(1,), in_axes=(0, None, None); the static value picks the
// branch (x * 100 + r when > 5, else x * static + r). First element from each device.
struct StaticArgExample {
  Array with_7, with_3;  // (4,) each: result[:, 0]
};
StaticArgExample pmap_static_argument(Backend& backend, const Array& prepared);

// 001 §7: psum / pmean / all_gather inside pmap, data (4, 8, 3) sharded, weights (3, 2)
// replicated, local_output = dot(data_shard, weights).
struct CollectivesExample {
  Array weights;
  Array summed;    // (4, 8, 2): psum(local_output) on every device
  Array mean;      // (4,):      pmean(local_output[0, 0])
  Array gathered;  // (4, 4, 2): all_gather(local_output[0, :])
};
CollectivesExample pmap_collectives(Backend& backend, const Array& prepared);

// x / psum(x) and pmean(x) over arange(4.) (the normalization example of jax.pmap's docstring,
// a pattern the tutorials' psum sections describe but do not print).
struct NormalizeExample {
  Array x, normalized, mean;
};
NormalizeExample pmap_normalize(Backend& backend);

// lax.axis_index inside pmap, and 002 "Pattern 1: device-specific computations":
// ones((4, 10)) * (device_id + 1), with the device id passed in (as the seed does) and read from
// axis_index (as one would without the extra argument).
struct AxisIndexExample {
  Array indices;          // (4,) int32
  Array passed_ids;       // (4, 10)
  Array from_axis_index;  // (4, 10)
};
AxisIndexExample pmap_axis_index(Backend& backend);

// 002 "Reduction Operations in pmap": local sums, psum'd sum and count, global mean; arange data
// (4, 1000) instead of jax.random.normal.
struct ReductionExample {
  Array local_sum, global_sum, global_count, global_mean;  // each (4,)
};
ReductionExample pmap_sum_and_mean(Backend& backend);

// 002 "Pattern 2: conditional execution": sum(x) * 2 on the lead device, mean(x) elsewhere, on
// ones((4, 10)).
Array pmap_conditional(Backend& backend);

// 003 "What Happens During pmean": three devices' gradients [1, 2, 3], [1.5, 2.5, 3.5],
// [0.5, 1.5, 2.5] averaged by pmean (each row of the result is one device's view).
Array pmap_pmean_gradients(Backend& backend);

// 004 "pmap": parallel_fn = jax.pmap(lambda x: psum(x, 'i')). Without axis_name='i' JAX rejects
// the unbound name; `error` holds our message. With it, arange(4.) sums to 6 on every device.
struct UnboundAxisExample {
  std::string error;
  Array with_axis_name;
};
UnboundAxisExample pmap_psum_axis_name(Backend& backend);

// 004 "Custom Collectives": ppermute(x, 'devices', perm=[(0, 1), (1, 0)]) on 2 devices.
Array pmap_ppermute_swap(Backend& backend);

// 004 "shard_map": Mesh((2, 4), ('x', 'y')), in_specs=P('x', 'y'), out_specs=P('x'),
// x_shard.sum(axis=1) on x = arange(32) as (4, 8). As written the output still varies along 'y',
// which check_vma rejects (`error`); with check_vma=False each row block reads the first 'y'
// device's partial sum; psum over 'y' gives the true row sums.
struct ShardMapExample {
  Array x;
  Array block_shape;  // (2,) int32: one device's block shape
  std::string error;  // the seed's version under check_vma=True
  Array unchecked;    // (4,): the seed's version with check_vma=False
  Array row_sums;     // (4,): with psum over 'y'
};
ShardMapExample shard_map_row_sums(Backend& backend);

}  // namespace spmd::seeds
