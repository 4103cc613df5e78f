#pragma once
// A collective algorithm's schedule: the messages the simulator carries over the topology's links,
// and what each receiver does with them. It is one of the three faces of an algorithm (schedule,
// reduction order, closed-form time; docs/design.md); executing it must reproduce the reduction
// order's fold bit for bit, and on uncontended links its time must equal the closed form.
//
// Data model. Ranks are positions in the collective group (0..n-1). Every rank has a read-only
// `input` buffer of `input_elements` and a `work` buffer of `work_elements`. Before any transfer:
//   work is filled with `work_fill` (the op's identity, or zero for copies), then the rank's input
//   is copied into work at `input_offset[rank]` unless `input_offset[rank] < 0`.
// A transfer takes a snapshot of elements [begin, end) of the source rank's `from` buffer at the
// moment it is sent, carries it over the route from source to destination, and on arrival
// applies it to the destination's work at [dest_begin, dest_begin + (end - begin)):
//   reduce: work = op(work, received)   (the receiver's value is the left operand)
//   copy:   work = received
// Ordering: a transfer is sent only after every transfer in `send_after` has been applied, and
// applied only after it has arrived and every transfer in `apply_after` has been applied. A
// transfer whose source equals its destination moves no bytes over links (a local copy).
// After all transfers, rank r's result is work[result_begin[r], result_end[r]).

#include <cstdint>
#include <string>
#include <vector>

namespace spmd::collectives {

enum class TransferAction { reduce, copy };
enum class SourceBuffer { input, work };
enum class WorkFill { identity, zero };

struct Transfer {
  int source = 0;
  int destination = 0;
  SourceBuffer from = SourceBuffer::work;
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int64_t dest_begin = 0;
  TransferAction action = TransferAction::copy;
  std::vector<int> send_after;   // indices of transfers in Schedule::transfers
  std::vector<int> apply_after;
};

struct Schedule {
  std::string algorithm;  // "ring", "direct", ...
  int ranks = 0;
  std::int64_t input_elements = 0;
  std::int64_t work_elements = 0;
  WorkFill work_fill = WorkFill::identity;
  std::vector<std::int64_t> input_offset;  // per rank; -1: input not copied into work
  std::vector<std::int64_t> result_begin;  // per rank
  std::vector<std::int64_t> result_end;    // per rank
  std::vector<Transfer> transfers;         // dependencies point only to earlier indices

  // Checks the invariants above (ranges inside buffers, dependencies to earlier transfers,
  // ranks in range); throws spmd::Error naming the first broken one.
  void validate() const;
};

}  // namespace spmd::collectives
