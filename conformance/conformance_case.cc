#include "conformance/conformance_case.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "reference/elementwise.h"
#include "reference/npy.h"

namespace spmd::conformance {
namespace {

using nlohmann::json;

// Field access with errors that name the file and the field path.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw Error(file_ + ": " + path + ": " + what);
  }

  const json& field(const json& object, const std::string& path, const char* key) const {
    if (!object.is_object()) fail(path, "expected an object, got " + object.dump());
    auto it = object.find(key);
    if (it == object.end()) fail(path + "." + key, "missing, expected a value");
    return *it;
  }

  int integer(const json& value, const std::string& path) const {
    if (!value.is_number_integer()) fail(path, "expected an integer, got " + value.dump());
    return value.get<int>();
  }

  std::string string(const json& value, const std::string& path) const {
    if (!value.is_string()) fail(path, "expected a string, got " + value.dump());
    return value.get<std::string>();
  }

  const json& array(const json& value, const std::string& path) const {
    if (!value.is_array()) fail(path, "expected a list, got " + value.dump());
    return value;
  }

  bool boolean(const json& value, const std::string& path) const {
    if (!value.is_boolean()) fail(path, "expected true or false, got " + value.dump());
    return value.get<bool>();
  }

  std::optional<int> integer_or_null(const json& value, const std::string& path) const {
    if (value.is_null()) return std::nullopt;
    if (!value.is_number_integer()) fail(path, "expected an integer or null, got " + value.dump());
    return value.get<int>();
  }

  // "i" or ["x", "y"].
  AxisNames axis_names(const json& value, const std::string& path) const {
    if (value.is_string()) return AxisNames(value.get<std::string>());
    std::vector<std::string> names;
    for (std::size_t k = 0; k < array(value, path).size(); ++k) {
      names.push_back(string(value[k], path + "[" + std::to_string(k) + "]"));
    }
    return AxisNames(std::move(names));
  }

  PartitionSpec spec(const json& value, const std::string& path) const {
    std::vector<SpecEntry> entries;
    for (std::size_t d = 0; d < array(value, path).size(); ++d) {
      const json& e = value[d];
      const std::string entry_path = path + "[" + std::to_string(d) + "]";
      if (e.is_null()) entries.push_back({});
      else if (e.is_string()) entries.push_back({e.get<std::string>()});
      else entries.push_back(axis_names(e, entry_path).names);
    }
    return PartitionSpec(std::move(entries));
  }

  std::vector<std::vector<int>> int_lists(const json& value, const std::string& path) const {
    std::vector<std::vector<int>> lists;
    for (std::size_t g = 0; g < array(value, path).size(); ++g) {
      const std::string inner_path = path + "[" + std::to_string(g) + "]";
      std::vector<int> list;
      for (std::size_t i = 0; i < array(value[g], inner_path).size(); ++i) {
        list.push_back(integer(value[g][i], inner_path + "[" + std::to_string(i) + "]"));
      }
      lists.push_back(std::move(list));
    }
    return lists;
  }

 private:
  std::string file_;
};

ValueRef parse_ref(const Reader& r, const json& value, const std::string& path, int inputs,
                   int steps_before) {
  const std::string text = r.string(value, path);
  const bool is_input = text.rfind("in", 0) == 0;
  const bool is_step = text.rfind("s", 0) == 0;
  const std::string digits = text.substr(is_input ? 2 : 1);
  const bool numeric = !digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos;
  if ((!is_input && !is_step) || !numeric || digits.size() > 6) {
    r.fail(path, "\"" + text + "\" is not a reference, expected inN or sK");
  }
  const int index = std::stoi(digits);
  const int limit = is_input ? inputs : steps_before;
  if (index >= limit) {
    r.fail(path, "\"" + text + "\" refers to a value that does not exist (there are " +
                     std::to_string(limit) + (is_input ? " inputs" : " earlier steps") + ")");
  }
  return {is_input ? ValueRef::Kind::input : ValueRef::Kind::step, index};
}

CollectiveCall parse_collective(const Reader& r, const json& step, const std::string& path,
                                CollectiveOp op) {
  CollectiveCall call;
  call.op = op;
  call.axes = r.axis_names(r.field(step, path, "axis_name"), path + ".axis_name");
  if (step.contains("axis_index_groups") && !step["axis_index_groups"].is_null()) {
    call.axis_index_groups = r.int_lists(step["axis_index_groups"], path + ".axis_index_groups");
  }
  auto optional_int = [&](const char* key, int fallback) {
    return step.contains(key) ? r.integer(step[key], path + "." + key) : fallback;
  };
  if (step.contains("tiled")) call.tiled = r.boolean(step["tiled"], path + ".tiled");
  switch (op) {
    case CollectiveOp::all_gather:
      call.axis = optional_int("axis", 0);
      if (step.contains("to")) {
        const std::string to = r.string(step["to"], path + ".to");
        if (to != "varying" && to != "invarying") {
          r.fail(path + ".to", "\"" + to + "\", expected \"varying\" or \"invarying\"");
        }
        call.to_invariant = to == "invarying";
      }
      break;
    case CollectiveOp::psum_scatter: call.axis = optional_int("scatter_dimension", 0); break;
    case CollectiveOp::all_to_all:
      call.split_axis = r.integer(r.field(step, path, "split_axis"), path + ".split_axis");
      call.concat_axis = r.integer(r.field(step, path, "concat_axis"), path + ".concat_axis");
      break;
    case CollectiveOp::ppermute:
      for (const auto& pair : r.int_lists(r.field(step, path, "perm"), path + ".perm")) {
        if (pair.size() != 2) r.fail(path + ".perm", "expected [source, destination] pairs");
        call.perm.emplace_back(pair[0], pair[1]);
      }
      break;
    case CollectiveOp::pshuffle: {
      const json& perm = r.array(r.field(step, path, "perm"), path + ".perm");
      for (std::size_t i = 0; i < perm.size(); ++i) {
        call.shuffle.push_back(r.integer(perm[i], path + ".perm[" + std::to_string(i) + "]"));
      }
      break;
    }
    default: break;
  }
  return call;
}

Step parse_step(const Reader& r, const json& value, const std::string& path, int inputs,
                int index) {
  Step step;
  step.op = r.string(r.field(value, path, "op"), path + ".op");
  const json& args = r.array(r.field(value, path, "args"), path + ".args");
  for (std::size_t a = 0; a < args.size(); ++a) {
    step.args.push_back(
        parse_ref(r, args[a], path + ".args[" + std::to_string(a) + "]", inputs, index));
  }
  static const std::pair<const char*, ElementwiseOp> kElementwise[] = {
      {"add", ElementwiseOp::add}, {"sub", ElementwiseOp::sub}, {"mul", ElementwiseOp::mul},
      {"neg", ElementwiseOp::neg}, {"convert", ElementwiseOp::convert}};
  std::size_t expected_args = 1;
  bool found = false;
  for (const auto& [name, op] : kElementwise) {
    if (step.op != name) continue;
    step.action = op;
    expected_args = (op == ElementwiseOp::add || op == ElementwiseOp::sub ||
                     op == ElementwiseOp::mul) ? 2 : 1;
    if (op == ElementwiseOp::convert) {
      try {
        step.convert_to = dtype_from_name(r.string(r.field(value, path, "dtype"), path + ".dtype"));
      } catch (const Error& e) {
        r.fail(path + ".dtype", e.what());
      }
    }
    found = true;
  }
  if (!found) {
    CollectiveOp op;
    try {
      op = collective_op_from_name(step.op);
    } catch (const Error& e) {
      r.fail(path + ".op", std::string(e.what()) + ", add sub mul neg convert");
    }
    step.action = parse_collective(r, value, path, op);
    expected_args = op == CollectiveOp::axis_index ? 0 : 1;
  }
  if (step.args.size() != expected_args) {
    r.fail(path + ".args", "has " + std::to_string(step.args.size()) + " references, expected " +
                               std::to_string(expected_args) + " for " + step.op);
  }
  return step;
}

// JAX with x64 off (its default) canonicalizes 64-bit inputs to 32 bits.
Array canonicalize_x64(const Array& a) {
  if (a.dtype() == DType::float64) return convert(a, DType::float32);
  if (a.dtype() == DType::int64) return convert(a, DType::int32);
  return a;
}

Array load_array(const Reader& r, const json& entry, const std::string& path,
                 const std::filesystem::path& folder) {
  const std::string file = r.string(r.field(entry, path, "file"), path + ".file");
  std::optional<DType> declared;
  if (entry.contains("dtype")) {
    try {
      declared = dtype_from_name(r.string(entry["dtype"], path + ".dtype"));
    } catch (const Error& e) {
      r.fail(path + ".dtype", e.what());
    }
  }
  return read_npy((folder / file).string(), declared);
}

void parse_map(const Reader& r, const json& map, Case& c) {
  const std::string kind = r.string(r.field(map, "map", "kind"), "map.kind");
  if (kind == "pmap") {
    c.is_pmap = true;
    c.pmap.axis_name = r.string(r.field(map, "map", "axis_name"), "map.axis_name");
    for (const char* key : {"in_axes", "out_axes"}) {
      const std::string path = std::string("map.") + key;
      const json& axes = r.array(r.field(map, "map", key), path);
      auto& target = std::string(key) == "in_axes" ? c.pmap.in_axes : c.pmap.out_axes;
      for (std::size_t i = 0; i < axes.size(); ++i) {
        target.push_back(r.integer_or_null(axes[i], path + "[" + std::to_string(i) + "]"));
      }
    }
  } else if (kind == "shard_map") {
    c.is_pmap = false;
    const json& in_specs = r.array(r.field(map, "map", "in_specs"), "map.in_specs");
    for (std::size_t i = 0; i < in_specs.size(); ++i) {
      const std::string path = "map.in_specs[" + std::to_string(i) + "]";
      if (in_specs[i].is_null()) c.shard_map.in_specs.push_back(std::nullopt);
      else c.shard_map.in_specs.push_back(r.spec(in_specs[i], path));
    }
    const json& out_specs = r.array(r.field(map, "map", "out_specs"), "map.out_specs");
    for (std::size_t j = 0; j < out_specs.size(); ++j) {
      c.shard_map.out_specs.push_back(
          r.spec(out_specs[j], "map.out_specs[" + std::to_string(j) + "]"));
    }
    if (map.contains("check_vma")) c.shard_map.check_vma = r.boolean(map["check_vma"], "map.check_vma");
    c.shard_map.function_name = c.name;
  } else {
    r.fail("map.kind", "\"" + kind + "\", expected \"pmap\" or \"shard_map\"");
  }
}

}  // namespace

Case load_case(const std::string& json_path) {
  const Reader r(json_path);
  std::ifstream in(json_path);
  if (!in) throw Error(json_path + ": cannot open file");
  json root;
  try {
    root = json::parse(in);
  } catch (const json::parse_error& e) {
    throw Error(json_path + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  Case c;
  c.json_path = json_path;
  const int format = r.integer(r.field(root, "case", "format"), "format");
  if (format != 1) r.fail("format", std::to_string(format) + ", expected 1");
  c.name = r.string(r.field(root, "case", "name"), "name");
  if (root.contains("about")) c.about = r.string(root["about"], "about");

  const json& mesh = r.field(root, "case", "mesh");
  std::vector<int> shape;
  const json& shape_json = r.array(r.field(mesh, "mesh", "shape"), "mesh.shape");
  for (std::size_t k = 0; k < shape_json.size(); ++k) {
    shape.push_back(r.integer(shape_json[k], "mesh.shape[" + std::to_string(k) + "]"));
  }
  const AxisNames names = r.axis_names(r.field(mesh, "mesh", "axis_names"), "mesh.axis_names");
  try {
    c.mesh = Mesh(shape, names.names);
  } catch (const Error& e) {
    r.fail("mesh", e.what());
  }

  parse_map(r, r.field(root, "case", "map"), c);
  if (c.is_pmap && (c.mesh.axis_count() != 1 || c.mesh.axis_names()[0] != c.pmap.axis_name)) {
    r.fail("mesh", "a pmap case needs a one-axis mesh named by map.axis_name (\"" +
                       c.pmap.axis_name + "\"), got " + c.mesh.to_string());
  }

  const std::filesystem::path folder = std::filesystem::path(json_path).parent_path();
  const json& inputs = r.array(r.field(root, "case", "inputs"), "inputs");
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    c.inputs.push_back(
        canonicalize_x64(load_array(r, inputs[i], "inputs[" + std::to_string(i) + "]", folder)));
  }
  const json& body = r.array(r.field(root, "case", "body"), "body");
  for (std::size_t k = 0; k < body.size(); ++k) {
    c.body.push_back(parse_step(r, body[k], "body[" + std::to_string(k) + "]",
                                static_cast<int>(c.inputs.size()), static_cast<int>(k)));
  }
  const json& outputs = r.array(r.field(root, "case", "outputs"), "outputs");
  for (std::size_t j = 0; j < outputs.size(); ++j) {
    c.outputs.push_back(parse_ref(r, outputs[j], "outputs[" + std::to_string(j) + "]",
                                  static_cast<int>(c.inputs.size()),
                                  static_cast<int>(c.body.size())));
  }
  const json& expected = r.field(root, "case", "expected");
  if (expected.contains("error")) {
    c.expected_error = r.string(expected["error"], "expected.error");
  } else {
    const json& files = r.array(r.field(expected, "expected", "outputs"), "expected.outputs");
    Values values;
    for (std::size_t j = 0; j < files.size(); ++j) {
      values.push_back(
          load_array(r, files[j], "expected.outputs[" + std::to_string(j) + "]", folder));
    }
    if (values.size() != c.outputs.size()) {
      r.fail("expected.outputs", "has " + std::to_string(values.size()) + " files for " +
                                     std::to_string(c.outputs.size()) + " outputs");
    }
    c.expected_outputs = std::move(values);
  }
  if (root.contains("order")) {
    try {
      c.order = reduction_algorithm_from_name(r.string(root["order"], "order"));
    } catch (const Error& e) {
      r.fail("order", e.what());
    }
  }
  return c;
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
        case ElementwiseOp::add: steps.push_back(add(value(step.args[0]), value(step.args[1]))); break;
        case ElementwiseOp::sub: steps.push_back(sub(value(step.args[0]), value(step.args[1]))); break;
        case ElementwiseOp::mul: steps.push_back(mul(value(step.args[0]), value(step.args[1]))); break;
        case ElementwiseOp::neg: steps.push_back(neg(value(step.args[0]))); break;
        case ElementwiseOp::convert: steps.push_back(convert(value(step.args[0]), step.convert_to)); break;
      }
    }
    Values outputs;
    for (const ValueRef& ref : c.outputs) outputs.push_back(value(ref));
    return outputs;
  };
}

}  // namespace spmd::conformance
