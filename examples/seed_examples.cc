#include "examples/seed_examples.h"

#include "examples/example_ops.h"
#include "reference/elementwise.h"
#include "reference/pmap.h"
#include "reference/shard_map.h"

namespace spmd::seeds {
namespace {

constexpr int kDevices = 4;  // seed 001 forces --xla_force_host_platform_device_count=4

PmapOptions pmap_options(std::string axis_name, std::vector<std::optional<int>> in_axes = {},
                         std::vector<std::optional<int>> out_axes = {}) {
  PmapOptions options;
  options.axis_name = std::move(axis_name);
  options.in_axes = std::move(in_axes);
  options.out_axes = std::move(out_axes);
  return options;
}

Array first_value(const Values& values) { return values.at(0); }

// 001 §3: jnp.sum(data_shard * replicated_scalar_param, axis=0).
Values process_data_shard(Context&, const Values& args) {
  return {sum_axis(mul(args[0], args[1]), 0)};
}

// jnp.mean(x) for float32: the sum divided by the element count, as jnp.mean computes it.
Array mean_all(const Array& x) {
  return divide(sum_all(x), Array::scalar(static_cast<float>(x.size())));
}

}  // namespace

ScaleExample pmap_scale(Backend& backend) {
  ScaleExample example;
  example.x = arange_f32({kDevices, 4});
  example.factors = Array::from_values<float>({kDevices}, {10.0f, 20.0f, 30.0f, 40.0f});
  const auto scale_fn = [](Context&, const Values& args) -> Values {
    return {mul(args[0], args[1])};  // x_shard (4,) * scale_factor_on_device ()
  };
  example.result = first_value(
      run_pmap(backend, scale_fn, pmap_options("i", {0, 0}), {example.x, example.factors}));
  return example;
}

InOutAxesExample pmap_in_out_axes(Backend& backend) {
  InOutAxesExample example;
  example.global_data = arange_f32({8 * kDevices, 3});
  example.prepared = reshape(example.global_data, {kDevices, 8, 3});
  example.param = Array::scalar(5.0f);
  const Values args = {example.prepared, example.param};
  example.per_device_sums = first_value(
      run_pmap(backend, process_data_shard, pmap_options("data_axis", {0, std::nullopt}), args));

  const auto to_scalar_sum = [](Context&, const Values& a) -> Values {
    return {sum_all(mul(a[0], a[1]))};
  };
  example.scalar_sums =
      first_value(run_pmap(backend, to_scalar_sum, pmap_options("i", {0, std::nullopt}), args));

  // out_axes=None: every device returns jnp.array(42.0); pmap returns one copy.
  const auto fixed_value = [](Context&, const Values&) -> Values { return {Array::scalar(42.0f)}; };
  example.identical = first_value(
      run_pmap(backend, fixed_value, pmap_options("i", {0, std::nullopt}, {std::nullopt}),
               {Array(DType::float32, {kDevices, 1}), Array::scalar(0.0f)}));

  PmapOptions subset = pmap_options("data_axis_subset", {0, std::nullopt});
  subset.devices = std::vector<int>{0, 1};
  const Array subset_data = reshape(slice(example.global_data, 0, 0, 16), {2, 8, 3});
  example.subset_result =
      first_value(run_pmap(backend, process_data_shard, subset, {subset_data, example.param}));
  return example;
}

StaticArgExample pmap_static_argument(Backend& backend, const Array& prepared) {
  // my_static_op_example(x_dynamic_shard, static_python_val, another_dynamic_val_replicated)
  const auto static_op = [](Context&, const Values& args) -> Values {
    const int static_value = args[1].values<std::int32_t>()[0];
    const float factor = static_value > 5 ? 100.0f : static_cast<float>(static_value);
    return {add(scale(args[0], factor), args[2])};
  };
  PmapOptions options = pmap_options("i", {0, std::nullopt, std::nullopt});
  options.static_broadcasted_argnums = {1};
  const Array dynamic_shards = take(prepared, 2, 0);  // current_prepared_data[:, :, 0]
  const Array replicated = Array::scalar(0.5f);
  const auto first_column = [&](std::int32_t static_value) {
    const Array result = first_value(
        run_pmap(backend, static_op, options,
                 {dynamic_shards, Array::scalar<std::int32_t>(static_value), replicated}));
    return take(result, 1, 0);  // result[:, 0]
  };
  return {first_column(7), first_column(3)};
}

CollectivesExample pmap_collectives(Backend& backend, const Array& prepared) {
  const std::string axis = "aurora_data_parallel_mesh";
  const auto process_with_collectives = [axis](Context& ctx, const Values& args) -> Values {
    const Array local_output = dot(args[0], args[1]);  // (per_device_batch, out_features)
    const Array first_row = take(local_output, 0, 0);
    return {ctx.psum(local_output, axis), ctx.pmean(take(first_row, 0, 0), axis),
            ctx.all_gather(first_row, axis)};
  };
  CollectivesExample example;
  example.weights = arange_f32({3, 2}, 0.125f);  // exact binary fractions: sums stay exact
  const Values outputs =
      run_pmap(backend, process_with_collectives, pmap_options(axis, {0, std::nullopt}),
               {prepared, example.weights});
  example.summed = outputs[0];
  example.mean = outputs[1];
  example.gathered = outputs[2];
  return example;
}

NormalizeExample pmap_normalize(Backend& backend) {
  const auto normalize = [](Context& ctx, const Values& args) -> Values {
    return {divide(args[0], ctx.psum(args[0], "i")), ctx.pmean(args[0], "i")};
  };
  NormalizeExample example;
  example.x = arange_f32({kDevices});
  const Values outputs = run_pmap(backend, normalize, pmap_options("i"), {example.x});
  example.normalized = outputs[0];
  example.mean = outputs[1];
  return example;
}

AxisIndexExample pmap_axis_index(Backend& backend) {
  const auto index_only = [](Context& ctx, const Values&) -> Values {
    return {ctx.axis_index("i")};
  };
  // device_specific_computation(x, device_id): x * (device_id + 1).
  const auto device_specific = [](Context&, const Values& args) -> Values {
    const float id = static_cast<float>(args[1].values<std::int32_t>()[0]);
    return {scale(args[0], id + 1.0f)};
  };
  const auto from_axis_index = [](Context& ctx, const Values& args) -> Values {
    const float id = static_cast<float>(ctx.axis_index("i").values<std::int32_t>()[0]);
    return {scale(args[0], id + 1.0f)};
  };
  const Array test_data = full_f32({kDevices, 10}, 1.0f);
  AxisIndexExample example;
  example.indices = first_value(run_pmap(backend, index_only, pmap_options("i"), {test_data}));
  example.passed_ids = first_value(
      run_pmap(backend, device_specific, pmap_options("i"), {test_data, arange_i32({kDevices})}));
  example.from_axis_index =
      first_value(run_pmap(backend, from_axis_index, pmap_options("i"), {test_data}));
  return example;
}

ReductionExample pmap_sum_and_mean(Backend& backend) {
  const auto parallel_sum_and_mean = [](Context& ctx, const Values& args) -> Values {
    const Array local_sum = sum_all(args[0]);
    const auto local_count = Array::scalar<std::int32_t>(static_cast<std::int32_t>(args[0].size()));
    const Array global_sum = ctx.psum(local_sum, "devices");
    const Array global_count = ctx.psum(local_count, "devices");
    const Array global_mean = divide(global_sum, convert(global_count, DType::float32));
    return {local_sum, global_sum, global_count, global_mean};
  };
  const Values outputs = run_pmap(backend, parallel_sum_and_mean, pmap_options("devices"),
                                  {arange_f32({kDevices, 1000})});
  return {outputs[0], outputs[1], outputs[2], outputs[3]};
}

Array pmap_conditional(Backend& backend) {
  // lax.cond(is_lead_device, lambda: jnp.sum(x) * 2, lambda: jnp.mean(x)).
  const auto conditional = [](Context&, const Values& args) -> Values {
    const bool is_lead_device = args[1].values<bool>()[0];
    return {is_lead_device ? scale(sum_all(args[0]), 2.0f) : mean_all(args[0])};
  };
  const Array lead_flags = Array::from_values<bool>({kDevices}, {true, false, false, false});
  return first_value(run_pmap(backend, conditional, pmap_options("i"),
                              {full_f32({kDevices, 10}, 1.0f), lead_flags}));
}

Array pmap_pmean_gradients(Backend& backend) {
  const Array grads =
      Array::from_values<float>({3, 3}, {1.0f, 2.0f, 3.0f, 1.5f, 2.5f, 3.5f, 0.5f, 1.5f, 2.5f});
  const auto average = [](Context& ctx, const Values& args) -> Values {
    return {ctx.pmean(args[0], "devices")};
  };
  return first_value(run_pmap(backend, average, pmap_options("devices"), {grads}));
}

UnboundAxisExample pmap_psum_axis_name(Backend& backend) {
  const auto parallel_fn = [](Context& ctx, const Values& args) -> Values {
    return {ctx.psum(args[0], "i")};
  };
  UnboundAxisExample example;
  const Array data = arange_f32({kDevices});
  try {
    run_pmap(backend, parallel_fn, PmapOptions{}, {data});  // @jax.pmap: no axis_name
  } catch (const Error& e) {
    example.error = e.what();
  }
  example.with_axis_name = first_value(run_pmap(backend, parallel_fn, pmap_options("i"), {data}));
  return example;
}

Array pmap_ppermute_swap(Backend& backend) {
  const auto swap = [](Context& ctx, const Values& args) -> Values {
    return {ctx.ppermute(args[0], "devices", {{0, 1}, {1, 0}})};
  };
  return first_value(run_pmap(backend, swap, pmap_options("devices"), {arange_f32({2, 3})}));
}

ShardMapExample shard_map_row_sums(Backend& backend) {
  const Mesh mesh({2, 4}, {"x", "y"});
  ShardMapOptions options;
  options.in_specs = {PartitionSpec({{"x"}, {"y"}})};
  options.out_specs = {PartitionSpec({{"x"}})};
  options.function_name = "sharded_fn";
  const auto sharded_fn = [](Context&, const Values& args) -> Values {
    return {sum_axis(args[0], 1)};  // x_shard.sum(axis=1): this device's partial row sums
  };
  const auto with_psum = [](Context& ctx, const Values& args) -> Values {
    return {ctx.psum(sum_axis(args[0], 1), "y")};
  };
  const auto block_shape = [](Context&, const Values& args) -> Values {
    return {Array::from_values<std::int32_t>({2}, {static_cast<std::int32_t>(args[0].dim(0)),
                                                   static_cast<std::int32_t>(args[0].dim(1))})};
  };
  ShardMapExample example;
  example.x = arange_f32({4, 8});
  try {
    run_shard_map(backend, mesh, sharded_fn, options, {example.x});
  } catch (const Error& e) {
    example.error = e.what();
  }
  example.row_sums = first_value(run_shard_map(backend, mesh, with_psum, options, {example.x}));
  ShardMapOptions unchecked = options;
  unchecked.check_vma = false;
  example.unchecked = first_value(run_shard_map(backend, mesh, sharded_fn, unchecked, {example.x}));
  ShardMapOptions replicated_shape = unchecked;
  replicated_shape.out_specs = {PartitionSpec()};
  example.block_shape =
      first_value(run_shard_map(backend, mesh, block_shape, replicated_shape, {example.x}));
  return example;
}

}  // namespace spmd::seeds
