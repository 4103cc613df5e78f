#include "conformance/conformance_case.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "conformance/order_field.h"
#include "reference/elementwise.h"
#include "reference/multi_process.h"
#include "reference/npy.h"
#include "support/json_reader.h"

namespace spmd::conformance {
namespace {

constexpr std::string_view kInt32 = "a 32-bit integer";
constexpr std::string_view kAxisNames = "an axis name or a list of axis names";

// Any int (axes may be negative); beyond int's range the error names the field.
int int32_value(const JsonValue& value, std::string_view expected = kInt32) {
  return value.int32(std::numeric_limits<int>::min(), std::numeric_limits<int>::max(), expected);
}

// "i" or ["x", "y"].
AxisNames axis_names(const JsonValue& value) {
  if (value.is_string()) return AxisNames(value.string());
  std::vector<std::string> names;
  for (const JsonValue& name : value.elements(kAxisNames)) names.push_back(name.string(kAxisNames));
  return AxisNames(std::move(names));
}

// A PartitionSpec: each entry null, an axis name or a list of axis names.
PartitionSpec partition_spec(const JsonValue& value) {
  std::vector<SpecEntry> entries;
  for (const JsonValue& entry :
       value.elements("a PartitionSpec: a list of null, axis names or lists of axis names")) {
    if (entry.is_null()) entries.push_back({});
    else entries.push_back(axis_names(entry).names);
  }
  return PartitionSpec(std::move(entries));
}

std::vector<std::vector<int>> int32_lists(const JsonValue& value, std::string_view expected) {
  std::vector<std::vector<int>> lists;
  for (const JsonValue& list : value.elements(expected)) {
    lists.push_back(list.int32_list("a list of integers", kInt32));
  }
  return lists;
}

int int32_field(const JsonValue& step, std::string_view key, int fallback) {
  const std::optional<JsonValue> value = step.optional(key);
  if (!value) return fallback;
  return int32_value(*value);
}

// The names of the values a reference may name: the inputs and the steps before it, as ranges
// where there are many ("in0, in1, s0 to s9").
std::string defined_names(int inputs, int steps_before) {
  const auto names = [](std::string_view prefix, int count) -> std::string {
    if (count == 0) return "";
    if (count <= 3) {
      std::vector<std::string> each;
      for (int i = 0; i < count; ++i) each.push_back(fmt::format("{}{}", prefix, i));
      return fmt::format("{}", fmt::join(each, ", "));
    }
    return fmt::format("{0}0 to {0}{1}", prefix, count - 1);
  };
  const std::string in = names("in", inputs), s = names("s", steps_before);
  if (in.empty() && s.empty()) return "none (no inputs, no earlier steps)";
  if (in.empty() || s.empty()) return in + s;
  return in + ", " + s;
}

// "inN" (input N) or "sK" (the result of step K), which must exist already, named exactly as the
// value is: N and K in decimal without leading zeros ("s00" is no name, not "s0"). `user` says
// whose reference it is ("an argument of add"), or is empty.
ValueRef parse_ref(const JsonValue& value, int inputs, int steps_before, std::string_view user) {
  constexpr std::string_view kExpected = "a reference inN or sK";
  const std::string text = value.string(kExpected);
  const std::string whose = user.empty() ? "" : fmt::format(" ({})", user);
  const bool is_input = text.starts_with("in");
  const bool is_step = text.starts_with("s");
  const std::string digits = is_input || is_step ? text.substr(is_input ? 2 : 1) : "";
  const bool numeric =
      !digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos;
  if ((!is_input && !is_step) || !numeric) {
    value.fail(fmt::format("\"{}\"{} is not a reference, expected inN or sK", text, whose));
  }
  const int limit = is_input ? inputs : steps_before;
  const std::string where = user.empty() ? "in the case" : "before the step";
  if (digits.size() > 1 && digits.front() == '0') {
    value.fail(fmt::format(
        "\"{}\"{} refers to a value that does not exist (a value's name has no leading zeros), "
        "expected the exact name of one defined {}: {}",
        text, whose, where, defined_names(inputs, steps_before)));
  }
  // Nine digits fit an int; more name a value past any list a case can hold.
  const int index = digits.size() > 9 ? std::numeric_limits<int>::max() : std::stoi(digits);
  if (index >= limit) {
    value.fail(fmt::format(
        "\"{}\"{} refers to a value that does not exist, expected one defined {}: {}", text,
        whose, where, defined_names(inputs, steps_before)));
  }
  return {is_input ? ValueRef::Kind::input : ValueRef::Kind::step, index};
}

// Each collective's fields: JAX's parameter names for it (docs/conformance-format.md).
void require_collective_fields(const JsonValue& step, CollectiveOp op) {
  switch (op) {
    case CollectiveOp::psum:
    case CollectiveOp::pmean:
    case CollectiveOp::pmax:
    case CollectiveOp::pmin:
      step.require_object({"op", "args", "axis_name", "axis_index_groups"});
      return;
    case CollectiveOp::all_gather:
      step.require_object({"op", "args", "axis_name", "axis", "tiled", "axis_index_groups", "to"});
      return;
    case CollectiveOp::psum_scatter:
      step.require_object(
          {"op", "args", "axis_name", "scatter_dimension", "tiled", "axis_index_groups"});
      return;
    case CollectiveOp::all_to_all:
      step.require_object(
          {"op", "args", "axis_name", "split_axis", "concat_axis", "tiled", "axis_index_groups"});
      return;
    case CollectiveOp::ppermute:
    case CollectiveOp::pshuffle: step.require_object({"op", "args", "axis_name", "perm"}); return;
    case CollectiveOp::axis_index: step.require_object({"op", "args", "axis_name"}); return;
  }
}

CollectiveCall parse_collective(const JsonValue& step, CollectiveOp op) {
  require_collective_fields(step, op);
  CollectiveCall call;
  call.op = op;
  call.axes = axis_names(step.required("axis_name", kAxisNames));
  const std::optional<JsonValue> groups = step.optional("axis_index_groups");
  if (groups && !groups->is_null()) {
    call.axis_index_groups = int32_lists(*groups, "a list of lists of axis indices, or null");
  }
  if (const std::optional<JsonValue> tiled = step.optional("tiled")) call.tiled = tiled->boolean();
  switch (op) {
    case CollectiveOp::all_gather:
      call.axis = int32_field(step, "axis", 0);
      if (const std::optional<JsonValue> to = step.optional("to")) {
        constexpr std::string_view kExpected = "\"varying\" or \"invarying\"";
        const std::string text = to->string(kExpected);
        if (text != "varying" && text != "invarying") to->fail_value(kExpected);
        call.to_invariant = text == "invarying";
      }
      break;
    case CollectiveOp::psum_scatter: call.axis = int32_field(step, "scatter_dimension", 0); break;
    case CollectiveOp::all_to_all:
      call.split_axis = int32_value(step.required("split_axis", kInt32));
      call.concat_axis = int32_value(step.required("concat_axis", kInt32));
      break;
    case CollectiveOp::ppermute: {
      constexpr std::string_view kPairs = "a list of [source, destination] pairs";
      const JsonValue perm = step.required("perm", kPairs);
      for (const auto& pair : int32_lists(perm, kPairs)) {
        if (pair.size() != 2) perm.fail(fmt::format("expected {}", kPairs));
        call.perm.emplace_back(pair[0], pair[1]);
      }
      break;
    }
    case CollectiveOp::pshuffle:
      call.shuffle =
          step.required("perm", "a list of axis indices").int32_list("a list of axis indices", kInt32);
      break;
    default: break;
  }
  return call;
}

struct ElementwiseName {
  std::string_view name;
  ElementwiseOp op;
  std::size_t args;
};

constexpr ElementwiseName kElementwise[] = {{"add", ElementwiseOp::add, 2},
                                            {"sub", ElementwiseOp::sub, 2},
                                            {"mul", ElementwiseOp::mul, 2},
                                            {"neg", ElementwiseOp::neg, 1},
                                            {"convert", ElementwiseOp::convert, 1}};

DType parse_dtype(const JsonValue& value) {
  return value.named("a dtype name such as \"float32\"", dtype_from_name);
}

Step parse_step(const JsonValue& value, int inputs, int index) {
  Step step;
  const JsonValue op = value.required("op", "an operation name");
  step.op = op.string("an operation name");
  std::size_t expected_args = 1;
  const ElementwiseName* elementwise = nullptr;
  for (const ElementwiseName& entry : kElementwise) {
    if (step.op == entry.name) elementwise = &entry;
  }
  if (elementwise != nullptr) {
    step.action = elementwise->op;
    expected_args = elementwise->args;
    if (elementwise->op == ElementwiseOp::convert) {
      value.require_object({"op", "args", "dtype"});
      step.convert_to = parse_dtype(value.required("dtype", "a dtype name"));
    } else {
      value.require_object({"op", "args"});
    }
  } else {
    CollectiveOp collective;
    try {
      collective = collective_op_from_name(step.op);
    } catch (const Error& e) {
      op.fail(fmt::format("{}, add sub mul neg convert", e.what()));
    }
    step.action = parse_collective(value, collective);
    expected_args = collective == CollectiveOp::axis_index ? 0 : 1;
  }
  // The op is a known name by now: its references' errors name it.
  const std::string user = fmt::format("an argument of {}", step.op);
  const JsonValue args = value.required("args", "a list of references");
  for (const JsonValue& arg : args.elements("a list of references")) {
    step.args.push_back(parse_ref(arg, inputs, index, user));
  }
  if (step.args.size() != expected_args) {
    args.fail(fmt::format("has {} references, expected {} for {}", step.args.size(), expected_args,
                          step.op));
  }
  return step;
}

// JAX with x64 off (its default) canonicalizes 64-bit inputs to 32 bits.
Array canonicalize_x64(const Array& a) {
  if (a.dtype() == DType::float64) return convert(a, DType::float32);
  if (a.dtype() == DType::int64) return convert(a, DType::int32);
  return a;
}

// {"file": "x.npy"} or {"file": "x.npy", "dtype": "bfloat16"}, relative to the case's folder.
Array load_array(const JsonValue& entry, const std::filesystem::path& folder) {
  entry.require_object({"file", "dtype"});
  const JsonValue file = entry.required("file", "a .npy file name");
  const std::string name = file.string("a .npy file name");
  std::optional<DType> declared;
  if (const std::optional<JsonValue> dtype = entry.optional("dtype"))
    declared = parse_dtype(*dtype);
  try {
    return read_npy((folder / name).string(), declared);
  } catch (const Error& e) {
    file.fail(e.what());
  }
}

std::vector<std::optional<int>> pmap_axes(const JsonValue& value) {
  constexpr std::string_view kExpected = "an integer axis or null";
  std::vector<std::optional<int>> axes;
  for (const JsonValue& axis : value.elements("a list of integer axes or nulls")) {
    if (axis.is_null()) axes.push_back(std::nullopt);
    else axes.push_back(int32_value(axis, kExpected));
  }
  return axes;
}

void parse_map(const JsonValue& map, Case& c) {
  constexpr std::string_view kKinds = "\"pmap\" or \"shard_map\"";
  const JsonValue kind_value = map.required("kind", kKinds);
  const std::string kind = kind_value.string(kKinds);
  if (kind == "pmap") {
    map.require_object({"kind", "axis_name", "in_axes", "out_axes"});
    c.is_pmap = true;
    c.pmap.axis_name = map.required("axis_name", "an axis name").string("an axis name");
    c.pmap.in_axes = pmap_axes(map.required("in_axes", "a list of integer axes or nulls"));
    c.pmap.out_axes = pmap_axes(map.required("out_axes", "a list of integer axes or nulls"));
  } else if (kind == "shard_map") {
    map.require_object({"kind", "in_specs", "out_specs", "check_vma"});
    c.is_pmap = false;
    constexpr std::string_view kSpecs = "a list of PartitionSpecs";
    for (const JsonValue& spec : map.required("in_specs", kSpecs).elements(kSpecs)) {
      if (spec.is_null()) c.shard_map.in_specs.push_back(std::nullopt);
      else c.shard_map.in_specs.push_back(partition_spec(spec));
    }
    for (const JsonValue& spec : map.required("out_specs", kSpecs).elements(kSpecs)) {
      c.shard_map.out_specs.push_back(partition_spec(spec));
    }
    if (const std::optional<JsonValue> check = map.optional("check_vma")) {
      c.shard_map.check_vma = check->boolean();
    }
    c.shard_map.function_name = c.name;
  } else {
    kind_value.fail_value(kKinds);
  }
}

// The mesh's fields as written, before JAX's checks on them (build_mesh).
struct MeshFields {
  std::vector<int> shape;
  std::vector<std::string> axis_names;
};

MeshFields parse_mesh(const JsonValue& mesh) {
  mesh.require_object({"shape", "axis_names"});
  MeshFields fields;
  const JsonValue shape = mesh.required("shape", "a list of axis sizes");
  std::int64_t devices = 1;
  for (const JsonValue& size : shape.elements("a list of axis sizes")) {
    fields.shape.push_back(size.positive_int32());
    devices *= fields.shape.back();
    if (devices > std::numeric_limits<int>::max()) {
      shape.fail(fmt::format("has more than {} devices, expected at most that many",
                             std::numeric_limits<int>::max()));
    }
  }
  fields.axis_names = axis_names(mesh.required("axis_names", kAxisNames)).names;
  return fields;
}

// The format says a pmap case's mesh is its one mapped axis.
void check_pmap_mesh(const JsonValue& mesh, const MeshFields& fields, const Case& c) {
  if (fields.axis_names.size() == 1 && fields.shape.size() == 1 &&
      fields.axis_names[0] == c.pmap.axis_name) {
    return;
  }
  mesh.fail(fmt::format(
      "a pmap case needs a one-axis mesh named by map.axis_name (\"{}\"), got shape [{}] and "
      "axis_names [\"{}\"]",
      c.pmap.axis_name, fmt::join(fields.shape, ", "), fmt::join(fields.axis_names, "\", \"")));
}

// A pmap case's mesh is as large as the mapped input axes (where they agree and exist: where
// not, running the case gives JAX's error). An in_axes list of another length than the inputs is
// the program's error, which JAX raises when the pmapped function is called (pmap.py: a ValueError,
// "pytree structure error: different lengths of tuple"; docs/conformance-format.md).
void check_pmap_axes(const JsonValue& mesh, const MeshFields& fields, Case& c) {
  if (c.pmap.in_axes.size() != c.inputs.size()) {
    if (c.program_error) return;  // the mesh's error comes first
    c.program_error = fmt::format(
        "map.in_axes: ValueError: pmap in_axes has {} entr{} but the function was called with {} "
        "positional argument{} (pytree structure error: different lengths of tuple at key path "
        "pmap in_axes): in_axes must be a tree prefix of the tuple of arguments passed "
        "positionally to the pmapped function",
        c.pmap.in_axes.size(), c.pmap.in_axes.size() == 1 ? "y" : "ies", c.inputs.size(),
        c.inputs.size() == 1 ? "" : "s");
    return;
  }
  std::optional<std::int64_t> mapped_size;
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.pmap.in_axes[i]) continue;
    const int rank = c.inputs[i].rank();
    const int axis = *c.pmap.in_axes[i] < 0 ? *c.pmap.in_axes[i] + rank : *c.pmap.in_axes[i];
    if (axis < 0 || axis >= rank) return;
    const std::int64_t size = c.inputs[i].dim(axis);
    if (mapped_size && *mapped_size != size) return;
    mapped_size = size;
  }
  if (mapped_size && *mapped_size != fields.shape.at(0)) {
    mesh.required("shape", "").fail(fmt::format(
        "[{}], expected [{}]: a pmap case's mesh is its mapped axis, of size {} in the inputs",
        fmt::join(fields.shape, ", "), *mapped_size, *mapped_size));
  }
}

// JAX's checks on a mesh that reads well (an axis name twice, as many names as axes): a failed
// one is the program's error, not the file's.
void build_mesh(const MeshFields& fields, Case& c) {
  c.device_count = 1;
  for (int size : fields.shape) c.device_count *= size;
  try {
    c.mesh = Mesh(fields.shape, fields.axis_names);
  } catch (const Error& e) {
    c.program_error = fmt::format("mesh: {}", e.what());
  }
}

void parse_expected(const JsonValue& expected, const std::filesystem::path& folder, Case& c) {
  if (expected.has("error")) {
    expected.require_object({"error"});
    const JsonValue error = expected.required("error", "a string");
    c.expected_error = error.string();
    if (c.expected_error->empty()) error.fail_value("one line: why JAX rejects the case");
    return;
  }
  expected.require_object({"outputs", "error", "local_outputs"});
  constexpr std::string_view kFiles = "a list of {\"file\": ...} entries";
  const JsonValue files = expected.required("outputs", kFiles);
  Values values;
  for (const JsonValue& file : files.elements(kFiles)) values.push_back(load_array(file, folder));
  if (values.size() != c.outputs.size()) {
    files.fail(fmt::format("has {} files for {} outputs", values.size(), c.outputs.size()));
  }
  if (const std::optional<JsonValue> local = expected.optional("local_outputs")) {
    constexpr std::string_view kPerProcess = "a list, per process, of {\"file\": ...} entries";
    if (!c.processes) local->fail("is only for a case with processes, expected no local_outputs");
    const std::vector<JsonValue> per_process = local->elements(kPerProcess);
    if (static_cast<int>(per_process.size()) != c.processes->layout.process_count()) {
      local->fail(fmt::format("has {} entries, expected {}: one per process", per_process.size(),
                              c.processes->layout.process_count()));
    }
    for (const JsonValue& process_files : per_process) {
      const std::vector<JsonValue> entries = process_files.elements(kFiles);
      if (entries.size() != c.outputs.size()) {
        process_files.fail(
            fmt::format("has {} files for {} outputs", entries.size(), c.outputs.size()));
      }
      for (const JsonValue& file : entries) values.push_back(load_array(file, folder));
    }
    c.expects_local_outputs = true;
  }
  c.expected_outputs = std::move(values);
}

// A multi-process case: its inputs come per process (process_inputs.h), not from `inputs`.
void read_processes(const JsonValue& processes, const JsonValue& root,
                    const std::filesystem::path& folder, Case& c) {
  if (root.has("inputs")) {
    root.required("inputs", "").fail("is for single-process cases, expected each process's inputs "
                                     "in processes[p].inputs");
  }
  if (c.is_pmap) processes.fail("is only for shard_map cases, expected map.kind \"shard_map\"");
  if (c.program_error) processes.fail(fmt::format("needs a valid mesh ({})", *c.program_error));
  c.processes = read_process_inputs(
      processes, root.optional("load"), c.mesh, c.shard_map,
      [&folder](const JsonValue& entry) { return canonicalize_x64(load_array(entry, folder)); });
  for (const GlobalArray& array : c.processes->arrays) c.inputs.push_back(array.value(c.mesh));
}

// The case in `root`; errors name the field's path (the caller adds the file).
Case read_case(const JsonValue& root, const std::string& json_path,
               JaxVersion default_jax_version) {
  root.require_object({"format", "name", "about", "jax_version", "mesh", "map", "inputs",
                       "processes", "load", "body", "outputs", "expected", "order"});
  Case c;
  c.json_path = json_path;
  root.required("format", "1").integer(1, 1, "1");
  c.name = root.required("name", "a string").string();
  if (const std::optional<JsonValue> about = root.optional("about")) c.about = about->string();

  const JsonValue mesh = root.required("mesh", "an object with fields shape, axis_names");
  const MeshFields mesh_fields = parse_mesh(mesh);
  const JsonValue map = root.required("map", "an object with a kind, \"pmap\" or \"shard_map\"");
  parse_map(map, c);
  if (c.is_pmap) check_pmap_mesh(mesh, mesh_fields, c);
  build_mesh(mesh_fields, c);

  const std::filesystem::path folder = std::filesystem::path(json_path).parent_path();
  constexpr std::string_view kFiles = "a list of {\"file\": ...} entries";
  if (const std::optional<JsonValue> processes = root.optional("processes")) {
    read_processes(*processes, root, folder, c);
  } else {
    if (root.has("load")) root.required("load", "").fail("is only for a case with processes");
    for (const JsonValue& input : root.required("inputs", kFiles).elements(kFiles)) {
      c.inputs.push_back(canonicalize_x64(load_array(input, folder)));
    }
  }
  const int inputs = static_cast<int>(c.inputs.size());
  if (c.is_pmap) check_pmap_axes(mesh, mesh_fields, c);
  constexpr std::string_view kSteps = "a list of steps";
  for (const JsonValue& step : root.required("body", kSteps).elements(kSteps)) {
    c.body.push_back(parse_step(step, inputs, static_cast<int>(c.body.size())));
  }
  constexpr std::string_view kRefs = "a list of references";
  for (const JsonValue& output : root.required("outputs", kRefs).elements(kRefs)) {
    c.outputs.push_back(parse_ref(output, inputs, static_cast<int>(c.body.size()), ""));
  }
  // As with in_axes, JAX raises this ValueError when the function returns (pmap.py).
  if (c.is_pmap && !c.program_error && c.pmap.out_axes.size() != c.outputs.size()) {
    c.program_error = fmt::format(
        "map.out_axes: ValueError: pmap out_axes has {} entr{} but the function returned {} "
        "value{} (pytree structure error: different lengths of tuple at key path pmap "
        "out_axes): out_axes must be a tree prefix of the function's outputs",
        c.pmap.out_axes.size(), c.pmap.out_axes.size() == 1 ? "y" : "ies", c.outputs.size(),
        c.outputs.size() == 1 ? "" : "s");
  }
  parse_expected(root.required("expected", "{\"outputs\": [...]} or {\"error\": \"...\"}"), folder,
                 c);
  if (const std::optional<JsonValue> order = root.optional("order")) c.order = parse_order(*order);
  if (const std::optional<JsonValue> version = root.optional("jax_version")) {
    c.stated_jax_version = version->named("a JAX version, \"0.10\" or \"0.12\"",
                                          [](const std::string& name) {
                                            return jax_version_from_name(name);
                                          });
  }
  c.pmap.jax_version = c.shard_map.jax_version = c.stated_jax_version.value_or(default_jax_version);
  return c;
}

}  // namespace

Case load_case(const std::string& json_path, JaxVersion default_jax_version) {
  const nlohmann::json document = parse_json_file(json_path, "the case file");  // names the file
  try {
    return read_case(JsonValue(document, "case"), json_path, default_jax_version);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", json_path, e.what()));
  }
}

DeviceFunction body_function(const Case& c) {
  return [&c](Context& ctx, const Values& inputs) {
    Values steps;
    auto value = [&](const ValueRef& ref) -> const Array& {
      return ref.kind == ValueRef::Kind::input ? inputs[static_cast<std::size_t>(ref.index)]
                                               : steps[static_cast<std::size_t>(ref.index)];
    };
    for (const Step& step : c.body) {
      if (const auto* call = std::get_if<CollectiveCall>(&step.action)) {
        steps.push_back(call->op == CollectiveOp::axis_index
                            ? ctx.axis_index(call->axes)
                            : ctx.collective(*call, value(step.args[0])));
        continue;
      }
      switch (std::get<ElementwiseOp>(step.action)) {
        case ElementwiseOp::add:
          steps.push_back(add(value(step.args[0]), value(step.args[1]), ctx.numerics()));
          break;
        case ElementwiseOp::sub:
          steps.push_back(sub(value(step.args[0]), value(step.args[1]), ctx.numerics()));
          break;
        case ElementwiseOp::mul:
          steps.push_back(mul(value(step.args[0]), value(step.args[1]), ctx.numerics()));
          break;
        case ElementwiseOp::neg: steps.push_back(neg(value(step.args[0]))); break;
        case ElementwiseOp::convert:
          steps.push_back(convert(value(step.args[0]), step.convert_to));
          break;
      }
    }
    Values outputs;
    for (const ValueRef& ref : c.outputs) outputs.push_back(value(ref));
    return outputs;
  };
}

Values run_body(Backend& backend, const Case& c) {
  const DeviceFunction body = body_function(c);
  if (c.processes) {
    const std::vector<GlobalArray> outputs =
        run_shard_map_global(backend, c.mesh, body, c.shard_map, c.processes->arrays);
    Values values;
    for (const GlobalArray& out : outputs) {
      values.push_back(process_allgather(c.mesh, c.processes->layout, out, /*tiled=*/true));
    }
    if (!c.expects_local_outputs) return values;
    std::vector<Values> local(static_cast<std::size_t>(c.processes->layout.process_count()));
    for (std::size_t j = 0; j < outputs.size(); ++j) {
      const std::vector<Array> per_process = global_array_to_host_local_array(
          c.mesh, c.processes->layout, c.shard_map.out_specs[j], outputs[j]);
      for (std::size_t p = 0; p < per_process.size(); ++p) local[p].push_back(per_process[p]);
    }
    for (const Values& process_values : local) {
      values.insert(values.end(), process_values.begin(), process_values.end());
    }
    return values;
  }
  return c.is_pmap ? run_pmap(backend, body, c.pmap, c.inputs)
                   : run_shard_map(backend, c.mesh, body, c.shard_map, c.inputs);
}

}  // namespace spmd::conformance
