#include "collectives/schedule_data.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>

#include "reference/check.h"
#include "reference/error.h"
#include "reference/scalar_arithmetic.h"

namespace spmd::collectives {
namespace {

// Elements evaluated per pass over an expression graph: every node's tile stays in cache.
constexpr std::int64_t kTileElements = 2048;

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

// value(i) = expr->value(offset + i) for i in [0, length).
struct Piece {
  ExprPtr expr;
  std::int64_t offset = 0;
  std::int64_t length = 0;
};

// input: value(i) = inputs[rank][i]; fill: the schedule's fill value; combine:
// op(lhs.value(lhs_offset + i), rhs.value(rhs_offset + i)).
struct Expr {
  enum class Kind { input, fill, combine } kind = Kind::fill;
  int rank = 0;
  ExprPtr lhs, rhs;
  std::int64_t lhs_offset = 0, rhs_offset = 0;
};

// One rank's work buffer: pieces keyed by their first element, covering [0, size) without gaps.
class PieceBuffer {
 public:
  PieceBuffer(std::int64_t size, const ExprPtr& fill) {
    if (size > 0) pieces_[0] = Piece{fill, 0, size};
  }

  // The pieces covering [begin, end), cut to it.
  std::vector<Piece> read(std::int64_t begin, std::int64_t end) const {
    std::vector<Piece> out;
    if (begin >= end) return out;  // nothing to read (and an empty buffer has no pieces)
    auto it = std::prev(pieces_.upper_bound(begin));
    for (; it != pieces_.end() && it->first < end; ++it) {
      const std::int64_t start = std::max(begin, it->first);
      const std::int64_t stop = std::min(end, it->first + it->second.length);
      out.push_back(Piece{it->second.expr, it->second.offset + (start - it->first), stop - start});
    }
    return out;
  }

  // Replaces [begin, begin + total length) with `pieces`.
  void write(std::int64_t begin, const std::vector<Piece>& pieces) {
    std::int64_t length = 0;
    for (const Piece& p : pieces) length += p.length;
    if (length == 0) return;
    const std::int64_t end = begin + length;
    split_at(begin);
    split_at(end);
    pieces_.erase(pieces_.lower_bound(begin), pieces_.lower_bound(end));
    std::int64_t at = begin;
    for (const Piece& p : pieces) {
      if (p.length == 0) continue;
      pieces_[at] = p;
      at += p.length;
    }
  }

 private:
  void split_at(std::int64_t position) {
    auto it = pieces_.upper_bound(position);
    if (it == pieces_.begin()) return;
    --it;
    const std::int64_t start = it->first;
    Piece& piece = it->second;
    if (start == position || start + piece.length <= position) return;
    Piece tail{piece.expr, piece.offset + (position - start), start + piece.length - position};
    piece.length = position - start;
    pieces_[position] = tail;
  }

  std::map<std::int64_t, Piece> pieces_;
};

// op(a, b) piece by piece, cutting both lists at each other's boundaries.
std::vector<Piece> combine_pieces(const std::vector<Piece>& lhs, const std::vector<Piece>& rhs) {
  std::vector<Piece> out;
  std::size_t i = 0, j = 0;
  std::int64_t used_l = 0, used_r = 0;
  while (i < lhs.size() && j < rhs.size()) {
    const std::int64_t length = std::min(lhs[i].length - used_l, rhs[j].length - used_r);
    auto expr = std::make_shared<Expr>();
    expr->kind = Expr::Kind::combine;
    expr->lhs = lhs[i].expr;
    expr->lhs_offset = lhs[i].offset + used_l;
    expr->rhs = rhs[j].expr;
    expr->rhs_offset = rhs[j].offset + used_r;
    out.push_back(Piece{std::move(expr), 0, length});
    used_l += length;
    used_r += length;
    if (used_l == lhs[i].length) ++i, used_l = 0;
    if (used_r == rhs[j].length) ++j, used_r = 0;
  }
  return out;
}

// Builds every rank's result as pieces by executing the schedule's steps.
std::vector<std::vector<Piece>> execute_symbolically(const Schedule& schedule) {
  auto fill = std::make_shared<Expr>();
  std::vector<ExprPtr> inputs;
  std::vector<PieceBuffer> work;
  for (int r = 0; r < schedule.ranks; ++r) {
    auto input = std::make_shared<Expr>();
    input->kind = Expr::Kind::input;
    input->rank = r;
    inputs.push_back(input);
    work.emplace_back(schedule.work_elements, fill);
    const std::int64_t offset = schedule.input_offset[static_cast<std::size_t>(r)];
    if (offset >= 0 && schedule.input_elements > 0) {
      work.back().write(offset, {Piece{input, 0, schedule.input_elements}});
    }
  }
  for (const Step& step : schedule.steps) {
    std::vector<std::vector<Piece>> sent;  // read as the step starts
    sent.reserve(step.transfers.size());
    for (const Transfer& t : step.transfers) {
      const auto source = static_cast<std::size_t>(t.source);
      if (t.from == SourceBuffer::input) {
        sent.push_back({Piece{inputs[source], t.begin, t.elements()}});
      } else {
        sent.push_back(work[source].read(t.begin, t.end));
      }
    }
    for (std::size_t k = 0; k < step.transfers.size(); ++k) {
      const Transfer& t = step.transfers[k];
      PieceBuffer& destination = work[static_cast<std::size_t>(t.destination)];
      const std::int64_t end = t.dest_begin + t.elements();
      switch (t.action) {
        case TransferAction::copy: destination.write(t.dest_begin, sent[k]); break;
        case TransferAction::reduce:
          destination.write(t.dest_begin,
                            combine_pieces(destination.read(t.dest_begin, end), sent[k]));
          break;
        case TransferAction::reduce_received_left:
          destination.write(t.dest_begin,
                            combine_pieces(sent[k], destination.read(t.dest_begin, end)));
          break;
      }
    }
  }
  std::vector<std::vector<Piece>> results;
  for (int r = 0; r < schedule.ranks; ++r) {
    const auto i = static_cast<std::size_t>(r);
    results.push_back(work[i].read(schedule.result_begin[i], schedule.result_end[i]));
  }
  return results;
}

// One piece's expression graph flattened for tile evaluation: instruction i computes node
// `expr` at element (tile start + delta); operands are earlier instructions. A node used at
// several offsets appears once per offset.
struct Instruction {
  const Expr* expr = nullptr;
  std::int64_t delta = 0;
  int lhs = -1;
  int rhs = -1;
};

std::vector<Instruction> compile(const Piece& piece) {
  // Offsets each node is needed at, pushed from the root down (iterative: graphs may be
  // thousands deep), then emitted operands first.
  std::vector<Instruction> program;
  std::map<std::pair<const Expr*, std::int64_t>, int> index;
  struct Frame {
    const Expr* expr;
    std::int64_t delta;
    bool expanded;
  };
  std::vector<Frame> stack{{piece.expr.get(), piece.offset, false}};
  while (!stack.empty()) {
    const Frame frame = stack.back();
    stack.pop_back();
    const auto key = std::make_pair(frame.expr, frame.delta);
    if (!frame.expanded) {
      if (index.count(key)) continue;
      stack.push_back({frame.expr, frame.delta, true});
      if (frame.expr->kind == Expr::Kind::combine) {
        stack.push_back({frame.expr->rhs.get(), frame.delta + frame.expr->rhs_offset, false});
        stack.push_back({frame.expr->lhs.get(), frame.delta + frame.expr->lhs_offset, false});
      }
      continue;
    }
    if (index.count(key)) continue;
    Instruction instruction{frame.expr, frame.delta};
    if (frame.expr->kind == Expr::Kind::combine) {
      instruction.lhs = index.at({frame.expr->lhs.get(), frame.delta + frame.expr->lhs_offset});
      instruction.rhs = index.at({frame.expr->rhs.get(), frame.delta + frame.expr->rhs_offset});
    }
    index[key] = static_cast<int>(program.size());
    program.push_back(instruction);
  }
  return program;
}

// Evaluates pieces into arrays, one tile at a time over each piece's compiled graph.
template <class T, class Combine>
class Evaluator {
 public:
  Evaluator(std::span<const Array> inputs, Combine combine, T fill)
      : combine_(combine), fill_row_(std::make_unique<T[]>(kTileElements)) {
    std::fill_n(fill_row_.get(), kTileElements, fill);
    for (const Array& input : inputs) {
      // A generated input (perf's seeded data) is made a tile at a time where it is read, so its
      // bytes are never all held; any other is read in place.
      const ElementGenerator* generate = input.element_generator();
      SPMD_CHECK(input.dtype() == DTypeOf<T>::value,
                 fmt::format("run_schedule_data: input {} read as {}", input.type_string(),
                             dtype_name(DTypeOf<T>::value)));
      inputs_.push_back(generate ? InputSource{nullptr, generate}
                                 : InputSource{input.values<T>().data(), nullptr});
    }
  }

  void evaluate(const Piece& piece, T* out) {
    const std::vector<Instruction> program = compile(piece);
    const auto tile = static_cast<std::size_t>(kTileElements);
    if (program.size() * tile > row_capacity_) {
      row_capacity_ = program.size() * tile;
      rows_ = std::make_unique<T[]>(row_capacity_);  // not std::vector: vector<bool> has no data()
    }
    std::vector<const T*> value(program.size());
    for (std::int64_t begin = 0; begin < piece.length; begin += kTileElements) {
      const std::int64_t length = std::min(kTileElements, piece.length - begin);
      for (std::size_t i = 0; i < program.size(); ++i) {
        const Instruction& in = program[i];
        switch (in.expr->kind) {
          case Expr::Kind::input: {
            const InputSource& input = inputs_[static_cast<std::size_t>(in.expr->rank)];
            if (input.values != nullptr) {
              value[i] = input.values + in.delta + begin;
              break;
            }
            T* row = rows_.get() + i * tile;
            (*input.generate)(in.delta + begin, length, reinterpret_cast<std::byte*>(row));
            value[i] = row;
            break;
          }
          case Expr::Kind::fill: value[i] = fill_row_.get(); break;
          case Expr::Kind::combine: {
            const T* lhs = value[static_cast<std::size_t>(in.lhs)];
            const T* rhs = value[static_cast<std::size_t>(in.rhs)];
            T* row = rows_.get() + i * tile;
            for (std::int64_t k = 0; k < length; ++k) row[k] = combine_(lhs[k], rhs[k]);
            value[i] = row;
            break;
          }
        }
      }
      std::memcpy(out + begin, value.back(), static_cast<std::size_t>(length) * sizeof(T));
    }
  }

 private:
  // One rank's input: its values in memory, or (values null) the generator that makes them.
  struct InputSource {
    const T* values;
    const ElementGenerator* generate;
  };

  Combine combine_;
  std::vector<InputSource> inputs_;
  std::unique_ptr<T[]> fill_row_;
  std::unique_ptr<T[]> rows_;
  std::size_t row_capacity_ = 0;
};

// Identifies a result by its pieces, so ranks holding the same expressions share one array.
using PiecesKey = std::vector<std::tuple<const Expr*, std::int64_t, std::int64_t>>;

PiecesKey key_of(const std::vector<Piece>& pieces) {
  PiecesKey key;
  key.reserve(pieces.size());
  for (const Piece& p : pieces) key.emplace_back(p.expr.get(), p.offset, p.length);
  return key;
}

template <class T, class Combine>
std::vector<Array> evaluate_results(const std::vector<std::vector<Piece>>& results,
                                    std::span<const Array> inputs, DType dtype, Combine combine,
                                    T fill) {
  Evaluator<T, Combine> evaluator(inputs, combine, fill);
  std::vector<Array> arrays;
  std::map<PiecesKey, std::size_t> first_with;  // pointer keys: looked up, never iterated
  for (std::size_t r = 0; r < results.size(); ++r) {
    auto [it, inserted] = first_with.emplace(key_of(results[r]), r);
    if (!inserted) {
      arrays.push_back(arrays[it->second]);
      continue;
    }
    std::int64_t length = 0;
    for (const Piece& p : results[r]) length += p.length;
    Array out(dtype, {length});
    T* data = out.template mutable_values<T>().data();
    for (const Piece& p : results[r]) {
      evaluator.evaluate(p, data);
      data += p.length;
    }
    arrays.push_back(std::move(out));
  }
  return arrays;
}

template <bool kFlush>
std::vector<Array> evaluate_with_op(const std::vector<std::vector<Piece>>& results,
                                    std::span<const Array> flat_inputs, DType dtype, ReduceOp op,
                                    bool zero_fill) {
  return visit_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    switch (op) {
      case ReduceOp::sum:
        return evaluate_results(
            results, flat_inputs, dtype,
            arith::flushing_if<T, kFlush>([](T a, T b) { return arith::add(a, b); }),
            zero_fill ? T{} : arith::sum_identity<T>());
      case ReduceOp::max:
        return evaluate_results(
            results, flat_inputs, dtype,
            arith::flushing_if<T, kFlush>([](T a, T b) { return arith::max(a, b); }),
            zero_fill ? T{} : arith::max_identity<T>());
      case ReduceOp::min:
        return evaluate_results(
            results, flat_inputs, dtype,
            arith::flushing_if<T, kFlush>([](T a, T b) { return arith::min(a, b); }),
            zero_fill ? T{} : arith::min_identity<T>());
    }
    SPMD_UNREACHABLE("run_schedule_data: a ReduceOp outside the enum");
  });
}

}  // namespace

void check_schedule_inputs(const Schedule& schedule, std::span<const Array> inputs, ReduceOp op,
                           std::string_view caller) {
  const std::string who(caller);
  if (static_cast<int>(inputs.size()) != schedule.ranks) {
    throw Error(fmt::format("{}: {} inputs, expected {} (one per rank)", who, inputs.size(),
                            schedule.ranks));
  }
  for (std::size_t r = 0; r < inputs.size(); ++r) {
    if (inputs[r].rank() != 1 || inputs[r].size() != schedule.input_elements ||
        inputs[r].dtype() != inputs[0].dtype()) {
      throw Error(fmt::format("{}: input {} is {}, expected {}[{}]", who, r,
                              inputs[r].type_string(), dtype_name(inputs[0].dtype()),
                              schedule.input_elements));
    }
  }
  if (op == ReduceOp::sum && !inputs.empty() && inputs[0].dtype() == DType::bool_) {
    throw Error(who + ": sum of bool inputs, expected them converted to int32 first");
  }
}

std::vector<Array> run_schedule_data(const Schedule& schedule, std::span<const Array> flat_inputs,
                                     ReduceOp op, const FloatNumerics& numerics) {
  check_schedule_inputs(schedule, flat_inputs, op, "run_schedule_data");
  const std::vector<std::vector<Piece>> results = execute_symbolically(schedule);
  const DType dtype = flat_inputs.empty() ? DType::float32 : flat_inputs[0].dtype();
  const bool zero_fill = schedule.work_fill == WorkFill::zero;
  if (numerics.flush_subnormals) {
    return evaluate_with_op<true>(results, flat_inputs, dtype, op, zero_fill);
  }
  return evaluate_with_op<false>(results, flat_inputs, dtype, op, zero_fill);
}

}  // namespace spmd::collectives
