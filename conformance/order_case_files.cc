#include "conformance/order_case_files.h"

#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "conformance/order_field.h"
#include "reference/error.h"
#include "support/output_file.h"
#include "reference/npy.h"

namespace spmd::conformance {
namespace {

nlohmann::ordered_json file_entry(const std::string& file, DType dtype) {
  nlohmann::ordered_json entry{{"file", file}};
  if (dtype == DType::bfloat16) entry["dtype"] = "bfloat16";  // stored as uint16 bit patterns
  return entry;
}

std::string wrong_order_names(const WrongOrders& wrong) {
  std::string names;
  for (const WrongOrder& order : wrong.orders) names += (names.empty() ? "" : ", ") + order.name;
  return names;
}

std::string about(const OrderCase& c) {
  return fmt::format(
      "{} psum over {} devices folded as {}: {} elements per device, {} one pipeline unit; "
      "every wrong order gives other bits ({})",
      dtype_name(c.shape.dtype), c.shape.group_size, c.order.describe(), c.count,
      size_class_name(c.shape.size), wrong_order_names(c.wrong));
}

nlohmann::ordered_json case_json(const OrderCase& c, const std::string& input_file,
                                 const std::string& output_file) {
  using json = nlohmann::ordered_json;
  json root;
  root["format"] = 1;
  root["name"] = c.name;
  root["about"] = about(c);
  root["mesh"] = {{"shape", json::array({c.shape.group_size})}, {"axis_names", json::array({"i"})}};
  root["map"] = {{"kind", "pmap"},
                 {"axis_name", "i"},
                 {"in_axes", json::array({0})},
                 {"out_axes", json::array({nullptr})}};
  root["inputs"] = json::array({file_entry(input_file, c.shape.dtype)});
  root["body"] =
      json::array({{{"op", "psum"}, {"args", json::array({"in0"})}, {"axis_name", "i"}}});
  root["outputs"] = json::array({"s0"});
  root["expected"] = {{"outputs", json::array({file_entry(output_file, c.shape.dtype)})}};
  root["order"] = order_json(c.order);
  return root;
}

}  // namespace

std::string write_order_case(const OrderCase& c, const std::string& folder) {
  namespace fs = std::filesystem;
  const std::string input_file = c.name + ".in0.npy";
  const std::string output_file = c.name + ".out0.npy";
  write_npy((fs::path(folder) / input_file).string(), stack(c.contributions, 0));
  write_npy((fs::path(folder) / output_file).string(), c.expected);
  const std::string json_path = (fs::path(folder) / (c.name + ".json")).string();
  write_output_file(json_path, case_json(c, input_file, output_file).dump(1) + "\n");
  return json_path;
}

}  // namespace spmd::conformance
