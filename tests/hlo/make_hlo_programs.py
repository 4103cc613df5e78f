#!/usr/bin/env python3
"""Compiles six small SPMD programs with JAX on 8 fake CPU devices and writes, for each, the HLO
text of the module after SPMD partitioning (compiled.as_text(), what `spmdsim run MACHINE
program.hlo` imports) and a summary JSON: the collectives as this script counts them from the HLO
text (op, bytes, group size, groups, count per step) and compiled.memory_analysis()'s figures.

Run with XLA_FLAGS=--xla_force_host_platform_device_count=8 JAX_PLATFORMS=cpu:
  python3 tests/hlo/make_hlo_programs.py --out tests/hlo/programs
tests/hlo/check_jax_hlo.sh regenerates them with a pinned JAX and compares with the committed ones.
"""
import argparse
import json
import os
import re
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

try:
    from jax import shard_map
except ImportError:  # older JAX
    from jax.experimental.shard_map import shard_map

DEVICES = 8


def mesh(shape, names):
    return Mesh(np.array(jax.devices()[:DEVICES]).reshape(shape), names)


def sharded(m, spec, shape):
    return jax.device_put(jnp.ones(shape, jnp.float32), NamedSharding(m, spec))


# 1. Data-parallel MLP: replicated weights, batch split over 8 devices; jit's partitioner adds the
# gradient all-reduces.
def data_parallel_mlp():
    m = mesh((DEVICES,), ("data",))

    def step(params, x):
        def loss(params, x):
            h = x
            for w in params:
                h = jnp.tanh(h @ w)
            return jnp.mean(h * h)

        grads = jax.grad(loss)(params, x)
        return [w - 0.01 * g for w, g in zip(params, grads)]

    params = [sharded(m, P(), (32, 64)), sharded(m, P(), (64, 16))]
    x = sharded(m, P("data"), (64, 32))
    return jax.jit(step).lower(params, x)


# 2. FSDP (ZeRO-3): each device holds 1/8 of every weight; the forward pass all-gathers it, the
# backward pass reduce-scatters its gradient.
def fsdp():
    m = mesh((DEVICES,), ("fsdp",))

    @partial(shard_map, mesh=m, in_specs=(P("fsdp"), P("fsdp"), P("fsdp")),
             out_specs=(P("fsdp"), P("fsdp")))
    def step(w1, w2, x):
        def loss(w1, w2, x):
            full1 = jax.lax.all_gather(w1, "fsdp", tiled=True)
            full2 = jax.lax.all_gather(w2, "fsdp", tiled=True)
            return jnp.mean(jnp.tanh(jnp.tanh(x @ full1) @ full2) ** 2)

        g1, g2 = jax.grad(loss, argnums=(0, 1))(w1, w2, x)
        return w1 - 0.01 * g1, w2 - 0.01 * g2

    return jax.jit(step).lower(sharded(m, P("fsdp"), (32, 64)), sharded(m, P("fsdp"), (64, 32)),
                               sharded(m, P("fsdp"), (64, 32)))


# 3. Megatron tensor parallelism with sequence parallelism on a (data 2, model 4) mesh: the
# sequence-sharded activations are all-gathered before the column-parallel matmul and
# reduce-scattered after the row-parallel one, within each model group of 4.
def megatron_sequence_parallel():
    m = mesh((2, 4), ("data", "model"))

    @partial(shard_map, mesh=m, in_specs=(P("data", "model"), P(None, "model"), P("model", None)),
             out_specs=P("data", "model"))
    def mlp_block(x, w_in, w_out):
        full = jax.lax.all_gather(x, "model", axis=1, tiled=True)         # [b, s, d]
        hidden = jax.nn.gelu(full @ w_in)                                 # [b, s, f/4]
        partial_out = hidden @ w_out                                      # [b, s, d] partial sums
        return jax.lax.psum_scatter(partial_out, "model", scatter_dimension=1, tiled=True)

    return jax.jit(mlp_block).lower(sharded(m, P("data", "model"), (4, 16, 32)),
                                    sharded(m, P(None, "model"), (32, 128)),
                                    sharded(m, P("model", None), (128, 32)))


# 4. A transformer scanned over layers (jax.lax.scan: a while loop with a known trip count),
# tensor parallel over 8 devices: each layer's attention and MLP outputs are psum-ed.
def scan_transformer():
    m = mesh((DEVICES,), ("model",))
    layers, d, heads_dim, ff = 4, 32, 64, 128

    @partial(shard_map, mesh=m, in_specs=(P(), P(None, None, "model"), P(None, "model", None),
                                          P(None, None, "model"), P(None, "model", None)),
             out_specs=P())
    def forward(x, wqkv, wo, w_in, w_out):
        def layer(h, weights):
            wqkv, wo, w_in, w_out = weights
            q, k, v = jnp.split(h @ wqkv, 3, axis=-1)
            attention = jax.nn.softmax(q @ jnp.swapaxes(k, -1, -2) / 8.0) @ v
            h = h + jax.lax.psum(attention @ wo, "model")
            h = h + jax.lax.psum(jax.nn.gelu(h @ w_in) @ w_out, "model")
            return h, None

        out, _ = jax.lax.scan(layer, x, (wqkv, wo, w_in, w_out))
        return out

    return jax.jit(forward).lower(
        sharded(m, P(), (16, d)), sharded(m, P(None, None, "model"), (layers, d, 3 * heads_dim)),
        sharded(m, P(None, "model", None), (layers, heads_dim, d)),
        sharded(m, P(None, None, "model"), (layers, d, ff)),
        sharded(m, P(None, "model", None), (layers, ff, d)))


# 5. Pipeline stages: each of 8 stages runs its layer on a microbatch and hands the activations
# to the next stage with a collective-permute (the last stage's go back to the first).
def pipeline_stages():
    m = mesh((DEVICES,), ("stage",))
    microbatches = 3

    @partial(shard_map, mesh=m, in_specs=(P("stage"), P()), out_specs=P("stage"))
    def pipeline(w, x):
        forward = [(i, (i + 1) % DEVICES) for i in range(DEVICES)]
        h = x
        for _ in range(microbatches):
            h = jnp.tanh(h @ w[0])
            h = jax.lax.ppermute(h, "stage", forward)
        return h

    return jax.jit(pipeline).lower(sharded(m, P("stage"), (DEVICES, 32, 32)),
                                   sharded(m, P(), (16, 32)))


# 6. A bf16 step, tensor x data parallel on a (data 2, model 4) mesh: the input's features are
# all-gathered over model, the row-parallel matmul's activations psum-ed over model, and the
# gradients pmean-ed over data, all in bf16. XLA:CPU promotes these collectives to f32 (a
# "_promoted" reduction, converts around them); a GPU compile keeps bf16 (docs/hlo-import.md).
def bf16_tensor_data_parallel():
    m = mesh((2, 4), ("data", "model"))

    @partial(shard_map, mesh=m, in_specs=(P("data", "model"), P(None, "model"), P("model", None)),
             out_specs=(P(None, "model"), P("model", None)))
    def step(x, w_in, w_out):
        full = jax.lax.all_gather(x, "model", axis=1, tiled=True)
        def loss(w_in, w_out):
            y = jax.lax.psum(jnp.tanh(full @ w_in) @ w_out, "model")
            return jnp.mean(y.astype(jnp.float32) ** 2)

        g_in, g_out = jax.grad(loss, argnums=(0, 1))(w_in, w_out)
        return jax.lax.pmean(g_in, "data"), jax.lax.pmean(g_out, "data")

    def bf16(spec, shape):
        return jax.device_put(jnp.ones(shape, jnp.bfloat16), NamedSharding(m, spec))

    return jax.jit(step).lower(bf16(P("data", "model"), (16, 64)), bf16(P(None, "model"), (64, 128)),
                               bf16(P("model", None), (128, 64)))


PROGRAMS = {
    "data_parallel_mlp": data_parallel_mlp,
    "fsdp": fsdp,
    "megatron_sequence_parallel": megatron_sequence_parallel,
    "scan_transformer": scan_transformer,
    "pipeline_stages": pipeline_stages,
    "bf16_tensor_data_parallel": bf16_tensor_data_parallel,
}

# ---- Counting collectives in the HLO text (independently of spmdsim's parser)

DTYPE_BYTES = {"pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2, "s32": 4,
               "u32": 4, "f32": 4, "s64": 8, "u64": 8, "f64": 8}
COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute",
               "collective-broadcast")
INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(.+?)\s+([\w\-]+)\((.*?)\)(.*)$")
SHAPE = re.compile(r"(\w+)\[([\d,]*)\]")


def shape_bytes(text):
    total = 0
    for dtype, dims in SHAPE.findall(text):
        if dtype not in DTYPE_BYTES:
            continue
        n = 1
        for d in filter(None, dims.split(",")):
            n *= int(d)
        total += n * DTYPE_BYTES[dtype]
    return total


def groups_of(attributes, devices):
    explicit = re.search(r"replica_groups=\{((?:\{[\d,]*\},?)*)\}", attributes)
    if explicit:
        groups = [[int(v) for v in g.split(",") if v] for g in re.findall(r"\{([\d,]*)\}", explicit.group(1))]
        return groups or [list(range(devices))]
    iota = re.search(r"replica_groups=\[(\d+),(\d+)\]<=\[([\d,]+)\](?:T\(([\d,]+)\))?", attributes)
    if iota:
        count, size = int(iota.group(1)), int(iota.group(2))
        dims = [int(v) for v in iota.group(3).split(",")]
        ids = np.arange(count * size).reshape(dims)
        if iota.group(4):
            ids = ids.transpose([int(v) for v in iota.group(4).split(",")])
        return ids.reshape(count, size).tolist()
    mesh_form = re.search(r"replica_groups=mesh\[([^\]]*)\]\s*\{([^}]*)\}", attributes)
    if mesh_form:
        axes = [(n.strip("'"), int(s)) for n, s in
                (a.split("=") for a in mesh_form.group(1).split(","))]
        grouped = [a.strip().strip("'") for a in mesh_form.group(2).split(",") if a.strip()]
        names = [n for n, _ in axes]
        ids = np.arange(devices).reshape([s for _, s in axes])
        order = [names.index(n) for n in names if n not in grouped] + [names.index(n) for n in grouped]
        size = int(np.prod([dict(axes)[n] for n in grouped])) if grouped else 1
        return ids.transpose(order).reshape(-1, size).tolist()
    pairs = re.search(r"source_target_pairs=\{((?:\{\d+,\d+\},?)*)\}", attributes)
    if pairs:
        return [[int(a), int(b)] for a, b in re.findall(r"\{(\d+),(\d+)\}", pairs.group(1))]
    return [list(range(devices))]


def split_computations(hlo_text):
    """{name: [instruction lines]} and the entry computation's name."""
    computations, current, entry = {}, None, None
    for line in hlo_text.splitlines():
        header = re.match(r"^(ENTRY\s+)?%?([\w.\-]+)\s*\(.*\{\s*$", line)
        if header:
            current = header.group(2)
            computations[current] = []
            if header.group(1):
                entry = current
        elif line.startswith("}"):
            current = None
        elif current is not None:
            computations[current].append(re.sub(r"/\*.*?\*/", "", line))
    return computations, entry


def count_collectives(hlo_text, devices):
    """The collectives of the entry computation and of the computations it calls (a while body's
    counted once per trip: its known_trip_count), as a sorted list of {op, bytes, groups or
    source_target_pairs, count}. bytes: nccl-tests' S, the operands' bytes (all-gather: times the
    group size, the gathered result)."""
    computations, entry = split_computations(hlo_text)
    counts = {}

    def visit(name, multiplier):
        shapes = {}
        for line in computations[name]:
            match = INSTRUCTION.match(line)
            if not match:
                continue
            result, shape, opcode, operands, attributes = match.groups()
            shapes[result] = shape
            base = opcode[:-len("-start")] if opcode.endswith("-start") else opcode
            if base in COLLECTIVES:
                names = [o.strip().split()[-1].lstrip("%") for o in operands.split(",") if o.strip()]
                size = sum(shape_bytes(shapes[n]) for n in names)
                groups = groups_of(attributes, devices)
                entry_key = {"op": base}
                if base == "collective-permute":
                    entry_key["source_target_pairs"] = groups
                else:
                    entry_key["groups"] = groups
                    if base == "all-gather":
                        size *= len(groups[0])
                entry_key["bytes"] = size
                key = json.dumps(entry_key, sort_keys=True)
                counts[key] = counts.get(key, 0) + multiplier
            if opcode == "while":
                trips = int(re.search(r'"known_trip_count":\{"n":"(\d+)"\}', attributes).group(1))
                visit(re.search(r"body=%?([\w.\-]+)", attributes).group(1), multiplier * trips)
            if opcode in ("call", "async-start"):
                for called in re.findall(r"(?:to_apply|calls)=%?([\w.\-]+)", attributes):
                    visit(called, multiplier)

    visit(entry, 1)
    return [dict(json.loads(key), count=count) for key, count in sorted(counts.items())]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    assert len(jax.devices()) >= DEVICES, "run with XLA_FLAGS=--xla_force_host_platform_device_count=8"
    os.makedirs(args.out, exist_ok=True)
    for name, build in PROGRAMS.items():
        compiled = build().compile()
        text = compiled.as_text()
        stats = compiled.memory_analysis()
        summary = {
            "program": name,
            "jax_version": jax.__version__,
            "devices": DEVICES,
            "collectives": count_collectives(text, DEVICES),
            "memory_analysis": {
                "argument_size_in_bytes": stats.argument_size_in_bytes,
                "output_size_in_bytes": stats.output_size_in_bytes,
                "alias_size_in_bytes": stats.alias_size_in_bytes,
                "temp_size_in_bytes": stats.temp_size_in_bytes,
            },
        }
        # The FileNames section names this script by its absolute path: kept relative to the
        # repository, so a file does not depend on where it was made.
        here = os.path.dirname(os.path.abspath(__file__))
        repository = os.path.dirname(os.path.dirname(here))
        text = text.replace(f'"{repository}/', '"')
        with open(os.path.join(args.out, name + ".hlo"), "w") as f:
            f.write(text)
        with open(os.path.join(args.out, name + ".json"), "w") as f:
            json.dump(summary, f, indent=1)
            f.write("\n")
        print(f"{name}: {len(text)} characters, {len(summary['collectives'])} distinct collectives")


if __name__ == "__main__":
    main()
