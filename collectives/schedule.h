#pragma once
// A collective algorithm's schedule: the messages the simulator carries over the topology's links,
// and what each receiver does with them. It is one of the three faces of an algorithm (schedule,
// reduction order, closed-form time; docs/design.md); executing it must reproduce the reduction
// order's fold bit for bit, and on uncontended links its time must equal the closed form.
//
// Data model. Ranks are positions in the collective group (0..n-1). Every rank has a read-only
// `input` buffer of `input_elements` and a `work` buffer of `work_elements`. Before the first step
// work is filled with `work_fill` (the op's identity, or zero for pure data movement), then the
// rank's input is copied into work at `input_offset[rank]` unless `input_offset[rank] < 0`.
//
// The schedule is a list of steps, run one after the other (bulk synchronous). In a step, every
// transfer reads elements [begin, end) of its source rank's `from` buffer as they are when the step
// starts, carries them from source to destination, and when every transfer of the step has
// arrived they are applied to the destinations' work buffers in the order listed, at
// [dest_begin, dest_begin + (end - begin)):
//   reduce:               work = op(work, received)   (the receiver's value on the left)
//   reduce_received_left: work = op(received, work)
//   copy:                 work = received
// A transfer whose source equals its destination moves no bytes over links (a local copy).
// After the last step, rank r's result is work[result_begin[r], result_end[r]).
//
// Timing: a step starts when the previous one has been applied; its transfers leave at once and
// share the links of their routes (docs/link-sharing.md); the step ends at its last arrival. A
// transfer marked same_message travels in one message with the transfer before it (same source
// and destination): a message of several ranges (for_each_message), as the bidirectional torus
// sends a block whose shards are not contiguous.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace spmd::collectives {

enum class TransferAction : std::uint8_t { reduce, reduce_received_left, copy };
enum class SourceBuffer : std::uint8_t { input, work };
enum class WorkFill : std::uint8_t { identity, zero };

struct Transfer {
  int source = 0;
  int destination = 0;
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int64_t dest_begin = 0;
  SourceBuffer from = SourceBuffer::work;
  TransferAction action = TransferAction::copy;
  bool same_message = false;  // carried in the message of the transfer listed before it

  std::int64_t elements() const { return end - begin; }
  friend bool operator==(const Transfer&, const Transfer&) = default;
};

// The step's messages in order: `visit(first, elements)` for each transfer not marked
// same_message, with the elements of it and of the marked transfers that follow it.
template <typename Visit>
void for_each_message(std::span<const Transfer> transfers, Visit visit) {
  for (std::size_t i = 0; i < transfers.size();) {
    std::int64_t elements = transfers[i].elements();
    std::size_t next = i + 1;
    for (; next < transfers.size() && transfers[next].same_message; ++next) {
      elements += transfers[next].elements();
    }
    visit(transfers[i], elements);
    i = next;
  }
}

struct Step {
  std::vector<Transfer> transfers;
  friend bool operator==(const Step&, const Step&) = default;
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
  std::vector<Step> steps;

  // Checks the invariants above (sizes per rank, ranges inside buffers, ranks in range); throws
  // spmd::InternalError (reference/check.h) naming the first broken one: schedules are built by
  // the algorithms, so a broken one is a bug.
  void validate() const;
  std::size_t transfer_count() const;
  // The most elements any one rank receives in one step: the receive buffer it needs.
  std::int64_t max_received_elements_per_step() const;
};

}  // namespace spmd::collectives
