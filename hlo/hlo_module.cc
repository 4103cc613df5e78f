#include "hlo/hlo_module.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "reference/error.h"

namespace spmd::hlo {
namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())) != 0) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0) {
    text.remove_suffix(1);
  }
  return text;
}

std::string without_percent(std::string_view name) {
  name = trim(name);
  if (name.starts_with('%')) name.remove_prefix(1);
  return std::string(name);
}

// "/*index=5*/" comments, which XLA prints inside long tuples, removed.
std::string without_comments(std::string_view line) {
  std::string result;
  std::size_t at = 0;
  while (at < line.size()) {
    const std::size_t open = line.find("/*", at);
    if (open == std::string_view::npos) break;
    const std::size_t close = line.find("*/", open + 2);
    if (close == std::string_view::npos) break;
    result.append(line.substr(at, open - at));
    at = close + 2;
  }
  result.append(line.substr(at));
  return result;
}

// Splits at the commas outside brackets and quotes: "a={1,2}, b=mesh['x'=2] {'x'}" -> 2 parts.
std::vector<std::string_view> split_top_level(std::string_view text) {
  std::vector<std::string_view> parts;
  int depth = 0;
  char quote = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == '\\') ++i;
      else if (c == quote) quote = 0;
      continue;
    }
    if (c == '"' || c == '\'') quote = c;
    else if (c == '(' || c == '{' || c == '[') ++depth;
    else if (c == ')' || c == '}' || c == ']') --depth;
    else if (c == ',' && depth == 0) {
      parts.push_back(trim(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  const std::string_view last = trim(text.substr(start));
  if (!last.empty()) parts.push_back(last);
  return parts;
}

// The position of the bracket closing the one at text[open]; npos if none.
std::size_t matching_close(std::string_view text, std::size_t open) {
  int depth = 0;
  char quote = 0;
  for (std::size_t i = open; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == '\\') ++i;
      else if (c == quote) quote = 0;
      continue;
    }
    if (c == '"' || c == '\'') quote = c;
    else if (c == '(' || c == '{' || c == '[') ++depth;
    else if ((c == ')' || c == '}' || c == ']') && --depth == 0) return i;
  }
  return std::string_view::npos;
}

std::vector<std::pair<std::string, std::string>> read_attributes(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> attributes;
  for (std::string_view part : split_top_level(text)) {
    // The mesh form of replica groups may carry ", device_ids=(...)" inside its value
    // (xla/hlo/ir/mesh_and_axis.cc Mesh::ToString): it belongs to replica_groups.
    if (part.starts_with("device_ids=") && !attributes.empty() &&
        attributes.back().first == "replica_groups") {
      attributes.back().second += ", " + std::string(part);
      continue;
    }
    const std::size_t equals = part.find('=');
    if (equals == std::string_view::npos) {
      attributes.emplace_back(std::string(part), "");
    } else {
      attributes.emplace_back(std::string(trim(part.substr(0, equals))),
                              std::string(trim(part.substr(equals + 1))));
    }
  }
  return attributes;
}

class Parser {
 public:
  Parser(std::string_view text, std::string file) : text_(text) { module_.file = std::move(file); }

  HloModule parse() {
    std::istringstream lines{std::string(text_)};
    std::string raw;
    while (std::getline(lines, raw)) {
      ++line_;
      const std::string cleaned = without_comments(raw);
      read_line(trim(cleaned));
    }
    if (current_ >= 0) module_.fail_at_line(line_, "end of file inside a computation, expected '}'");
    if (!seen_header_) {
      module_.fail_at_line(1, "expected the module header 'HloModule NAME, ...'");
    }
    if (module_.computations.empty()) {
      module_.fail_at_line(line_, "no computation found, expected an ENTRY computation");
    }
    if (module_.entry < 0) module_.entry = static_cast<int>(module_.computations.size()) - 1;
    return std::move(module_);
  }

 private:
  void read_line(std::string_view line) {
    if (line.empty()) return;
    if (current_ < 0) {
      if (line.starts_with("HloModule")) return read_header(line);
      if (line.ends_with('{')) return open_computation(line);
      return;  // FileNames, FunctionNames, FileLocations, StackFrames: not used
    }
    if (line == "}") {
      close_computation();
      return;
    }
    read_instruction(line);
  }

  void read_header(std::string_view line) {
    seen_header_ = true;
    line.remove_prefix(std::string_view("HloModule").size());
    const std::vector<std::string_view> parts = split_top_level(line);
    if (parts.empty()) module_.fail_at_line(line_, "HloModule: expected the module's name");
    module_.name = std::string(parts[0]);
    for (std::size_t i = 1; i < parts.size(); ++i) {
      const std::size_t equals = parts[i].find('=');
      if (equals == std::string_view::npos) continue;
      const std::string_view key = trim(parts[i].substr(0, equals));
      const std::string_view value = trim(parts[i].substr(equals + 1));
      if (key == "replica_count") module_.replica_count = header_count(key, value);
      if (key == "num_partitions") module_.num_partitions = header_count(key, value);
    }
  }

  int header_count(std::string_view key, std::string_view value) {
    int result = 0;
    for (char c : value) {
      if (c < '0' || c > '9' || result > 1'000'000) {
        module_.fail_at_line(line_, fmt::format("{}: '{}', expected a positive integer", key, value));
      }
      result = result * 10 + (c - '0');
    }
    if (result < 1) {
      module_.fail_at_line(line_, fmt::format("{}: '{}', expected a positive integer", key, value));
    }
    return result;
  }

  void open_computation(std::string_view line) {
    const bool entry = line.starts_with("ENTRY ");
    if (entry) line.remove_prefix(6);
    line = trim(line);
    std::size_t end = 0;
    while (end < line.size() && line[end] != ' ' && line[end] != '(' && line[end] != '{') ++end;
    HloComputation computation;
    computation.name = without_percent(line.substr(0, end));
    computation.line = line_;
    if (computation.name.empty()) module_.fail_at_line(line_, "expected a computation's name");
    if (module_.index_by_name.contains(computation.name)) {
      module_.fail_at_line(line_, fmt::format("computation '{}' defined twice", computation.name));
    }
    current_ = static_cast<int>(module_.computations.size());
    module_.index_by_name[computation.name] = current_;
    if (entry) module_.entry = current_;
    module_.computations.push_back(std::move(computation));
  }

  void close_computation() {
    HloComputation& computation = module_.computations[static_cast<std::size_t>(current_)];
    if (computation.instructions.empty()) {
      module_.fail_at_line(line_, fmt::format("computation '{}' has no instructions",
                                              computation.name));
    }
    bool has_root = false;
    for (const HloInstruction& instruction : computation.instructions) {
      has_root = has_root || instruction.is_root;
    }
    if (!has_root) computation.instructions.back().is_root = true;
    current_ = -1;
  }

  void read_instruction(std::string_view line) {
    HloInstruction instruction;
    instruction.line = line_;
    if (line.starts_with("ROOT ")) {
      instruction.is_root = true;
      line.remove_prefix(5);
    }
    const std::size_t equals = line.find('=');
    if (equals == std::string_view::npos) {
      module_.fail_at_line(line_, fmt::format("'{}', expected an instruction 'NAME = SHAPE OPCODE(OPERANDS), ...'",
                                              line.substr(0, 60)));
    }
    instruction.name = without_percent(line.substr(0, equals));
    std::string_view rest = line.substr(equals + 1);
    try {
      instruction.shape = read_hlo_shape(rest);
    } catch (const Error& e) {
      module_.fail_at_line(line_, fmt::format("{}: {}", instruction.name, e.what()));
    }
    rest = trim(rest);
    const std::size_t open = rest.find('(');
    if (open == std::string_view::npos) {
      module_.fail_at_line(line_, fmt::format("{}: expected OPCODE(OPERANDS) after the shape",
                                              instruction.name));
    }
    instruction.opcode = std::string(trim(rest.substr(0, open)));
    const std::size_t close = matching_close(rest, open);
    if (close == std::string_view::npos) {
      module_.fail_at_line(line_, fmt::format("{}: expected ')' closing the operands of {}",
                                              instruction.name, instruction.opcode));
    }
    const std::string_view operands = rest.substr(open + 1, close - open - 1);
    if (instruction.opcode == "parameter") {
      instruction.attributes.emplace_back("parameter_number", std::string(trim(operands)));
    } else if (instruction.opcode == "constant") {
      instruction.attributes.emplace_back("literal", std::string(trim(operands)));
    } else {
      for (std::string_view operand : split_top_level(operands)) {
        const std::size_t space = operand.find_last_of(" \t");  // "f32[4]{0} %x" in older text
        instruction.operands.push_back(
            without_percent(space == std::string_view::npos ? operand : operand.substr(space + 1)));
      }
    }
    std::string_view after = trim(rest.substr(close + 1));
    if (after.starts_with(',')) after.remove_prefix(1);
    for (auto& attribute : read_attributes(after)) instruction.attributes.push_back(std::move(attribute));

    HloComputation& computation = module_.computations[static_cast<std::size_t>(current_)];
    if (computation.index_by_name.contains(instruction.name)) {
      module_.fail_at_line(line_, fmt::format("instruction '{}' defined twice in '{}'",
                                              instruction.name, computation.name));
    }
    computation.index_by_name[instruction.name] = static_cast<int>(computation.instructions.size());
    computation.instructions.push_back(std::move(instruction));
  }

  std::string_view text_;
  HloModule module_;
  int line_ = 0;
  int current_ = -1;
  bool seen_header_ = false;
};

}  // namespace

const std::string* HloInstruction::attribute(std::string_view key) const {
  for (const auto& [name, value] : attributes) {
    if (name == key) return &value;
  }
  return nullptr;
}

const HloInstruction& HloComputation::root() const {
  for (const HloInstruction& instruction : instructions) {
    if (instruction.is_root) return instruction;
  }
  return instructions.back();
}

const HloInstruction* HloComputation::find(std::string_view name) const {
  const auto found = index_by_name.find(name);
  return found == index_by_name.end() ? nullptr
                                      : &instructions[static_cast<std::size_t>(found->second)];
}

const HloComputation& HloModule::called(std::string_view name, const HloInstruction& at) const {
  const auto found = index_by_name.find(without_percent(name));
  if (found == index_by_name.end()) {
    fail(at, fmt::format("{} ({}): '{}', expected the name of a computation of the module",
                         at.name, at.opcode, name));
  }
  return computations[static_cast<std::size_t>(found->second)];
}

const HloComputation& HloModule::called_by(std::string_view key, const HloInstruction& at) const {
  const std::string* value = at.attribute(key);
  if (value == nullptr) {
    fail(at, fmt::format("{} ({}): no {}, expected {}=COMPUTATION", at.name, at.opcode, key, key));
  }
  return called(*value, at);
}

const HloInstruction& HloModule::operand(const HloComputation& computation,
                                         const HloInstruction& at, std::size_t index) const {
  if (index >= at.operands.size()) {
    fail(at, fmt::format("{} ({}): {} operands, expected at least {}", at.name, at.opcode,
                         at.operands.size(), index + 1));
  }
  const HloInstruction* operand = computation.find(at.operands[index]);
  if (operand == nullptr) {
    fail(at, fmt::format("{} ({}): operand '{}', expected an instruction of computation '{}'",
                         at.name, at.opcode, at.operands[index], computation.name));
  }
  return *operand;
}

void HloModule::fail(const HloInstruction& at, std::string_view message) const {
  fail_at_line(at.line, message);
}

void HloModule::fail_at_line(int line, std::string_view message) const {
  throw Error(fmt::format("{}:{}: {}", file, line, message));
}

bool looks_like_hlo_text(std::string_view text) { return trim(text).starts_with("HloModule"); }

bool is_hlo_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string start(256, '\0');
  in.read(start.data(), static_cast<std::streamsize>(start.size()));
  start.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  return looks_like_hlo_text(start);
}

HloModule parse_hlo_module(std::string_view text, std::string file) {
  return Parser(text, std::move(file)).parse();
}

HloModule load_hlo_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open the HLO file", path));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_hlo_module(text.str(), path);
}

std::vector<std::string> attribute_names(std::string_view value) {
  value = trim(value);
  if (value.starts_with('{') && value.ends_with('}')) value = value.substr(1, value.size() - 2);
  std::vector<std::string> names;
  for (std::string_view part : split_top_level(value)) names.push_back(without_percent(part));
  return names;
}

std::vector<std::string> conditional_branches(const HloInstruction& conditional) {
  if (const std::string* branches = conditional.attribute("branch_computations")) {
    return attribute_names(*branches);
  }
  std::vector<std::string> names;
  for (const char* key : {"true_computation", "false_computation"}) {
    if (const std::string* name = conditional.attribute(key)) names.push_back(without_percent(*name));
  }
  return names;
}

std::optional<std::vector<std::int64_t>> attribute_integers(std::string_view value) {
  value = trim(value);
  if (!value.starts_with('{') || !value.ends_with('}')) return std::nullopt;
  std::vector<std::int64_t> numbers;
  for (std::string_view part : split_top_level(value.substr(1, value.size() - 2))) {
    std::int64_t number = 0;
    if (part.empty() || part.size() > 15) return std::nullopt;
    for (char c : part) {
      if (c < '0' || c > '9') return std::nullopt;
      number = number * 10 + (c - '0');
    }
    numbers.push_back(number);
  }
  return numbers;
}

}  // namespace spmd::hlo
