#include "backends/cuda/schedule_on_gpu.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device_memory.h"
#include "backends/cuda/element_kernels.h"
#include "collectives/schedule_data.h"
#include "reference/error.h"
#include "reference/scalar_arithmetic.h"

namespace spmd::cuda {
namespace {

using collectives::Schedule;
using collectives::SourceBuffer;
using collectives::Step;
using collectives::Transfer;
using collectives::TransferAction;
using collectives::WorkFill;

// The element work buffers start as: the op's identity (or zero for pure data movement), as
// collectives::run_schedule_data fills them.
std::vector<std::byte> fill_element(DType dtype, ReduceOp op, WorkFill fill) {
  return visit_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    T value{};
    if (fill == WorkFill::identity) {
      value = op == ReduceOp::sum   ? arith::sum_identity<T>()
              : op == ReduceOp::max ? arith::max_identity<T>()
                                    : arith::min_identity<T>();
    }
    std::vector<std::byte> bytes(sizeof(T));
    std::memcpy(bytes.data(), &value, sizeof(T));
    return bytes;
  });
}

// Rank r's work buffer before the first step: filled, then its input at input_offset[r].
std::vector<std::byte> initial_work(const Schedule& schedule, const Array& input, int rank,
                                    const std::vector<std::byte>& fill) {
  const std::size_t element_bytes = fill.size();
  std::vector<std::byte> work(static_cast<std::size_t>(schedule.work_elements) * element_bytes);
  for (std::size_t at = 0; at < work.size(); at += element_bytes) {
    std::memcpy(work.data() + at, fill.data(), element_bytes);
  }
  const std::int64_t offset = schedule.input_offset[static_cast<std::size_t>(rank)];
  if (offset >= 0 && schedule.input_elements > 0) {
    std::memcpy(work.data() + static_cast<std::size_t>(offset) * element_bytes,
                input.bytes().data(), input.size_bytes());
  }
  return work;
}

// Where each transfer of a step lands in the receive area, in elements.
std::vector<std::int64_t> receive_offsets(const Step& step) {
  std::vector<std::int64_t> offsets;
  std::int64_t at = 0;
  for (const Transfer& t : step.transfers) {
    offsets.push_back(at);
    at += t.elements();
  }
  offsets.push_back(at);  // the total
  return offsets;
}

std::int64_t largest_step_elements(const Schedule& schedule) {
  std::int64_t largest = 0;
  for (const Step& step : schedule.steps) largest = std::max(largest, receive_offsets(step).back());
  return largest;
}

// One GPU's virtual devices for one schedule run.
class VirtualDevices {
 public:
  VirtualDevices(const Schedule& schedule, std::span<const Array> inputs, ReduceOp op,
                 bool flush_subnormals)
      : schedule_(schedule),
        dtype_(inputs.empty() ? DType::float32 : inputs[0].dtype()),
        op_(op),
        flush_subnormals_(flush_subnormals),
        element_bytes_(dtype_size_bytes(dtype_)),
        streams_(static_cast<std::size_t>(schedule.ranks)),
        sent_(static_cast<std::size_t>(schedule.ranks)) {
    const std::vector<std::byte> fill = fill_element(dtype_, op, schedule.work_fill);
    for (int r = 0; r < schedule.ranks; ++r) {
      const Array& input = inputs[static_cast<std::size_t>(r)];
      const std::string name = fmt::format("rank {}", r);
      inputs_.emplace_back(input.size_bytes(), name + " input");
      upload(inputs_.back(), input.bytes().data(), input.size_bytes());
      const std::vector<std::byte> work = initial_work(schedule, input, r, fill);
      work_.emplace_back(work.size(), name + " work");
      upload(work_.back(), work.data(), work.size());
    }
    receive_ =
        DeviceBuffer(static_cast<std::size_t>(largest_step_elements(schedule)) * element_bytes_,
                     "the receive area");
    // Pageable uploads may still be in flight on the legacy stream, which the virtual devices'
    // non-blocking streams do not wait for.
    check_cuda(cudaDeviceSynchronize(), "the uploads of the inputs");
  }

  void run_step(const Step& step, std::size_t index) {
    const std::vector<std::int64_t> offsets = receive_offsets(step);
    for (std::size_t k = 0; k < step.transfers.size(); ++k) send(step.transfers[k], offsets[k]);
    every_stream_waits_for_all();
    for (std::size_t k = 0; k < step.transfers.size(); ++k) receive(step.transfers[k], offsets[k]);
    every_stream_waits_for_all();
    check_cuda(cudaGetLastError(), fmt::format("step {}", index));
  }

  std::vector<Array> results() {
    check_cuda(cudaDeviceSynchronize(), "the schedule's last step");
    std::vector<Array> out;
    for (int r = 0; r < schedule_.ranks; ++r) {
      const auto i = static_cast<std::size_t>(r);
      Array result(dtype_, {schedule_.result_end[i] - schedule_.result_begin[i]});
      check_cuda(cudaMemcpy(result.mutable_bytes().data(), at(work_[i], schedule_.result_begin[i]),
                            result.size_bytes(), cudaMemcpyDeviceToHost),
                 fmt::format("copy of rank {}'s result to the host", r));
      out.push_back(std::move(result));
    }
    return out;
  }

 private:
  std::byte* at(const DeviceBuffer& buffer, std::int64_t element) const {
    return buffer.data() + static_cast<std::size_t>(element) * element_bytes_;
  }

  void upload(const DeviceBuffer& buffer, const std::byte* bytes, std::size_t size) {
    if (size == 0) return;
    check_cuda(cudaMemcpy(buffer.data(), bytes, size, cudaMemcpyHostToDevice), "upload");
  }

  // The source's stream copies [begin, end) of its buffer, as it is now, into the receive area.
  void send(const Transfer& t, std::int64_t received_at) {
    if (t.elements() == 0) return;
    const auto source = static_cast<std::size_t>(t.source);
    const DeviceBuffer& from = t.from == SourceBuffer::input ? inputs_[source] : work_[source];
    check_cuda(cudaMemcpyAsync(at(receive_, received_at), at(from, t.begin),
                               static_cast<std::size_t>(t.elements()) * element_bytes_,
                               cudaMemcpyDeviceToDevice, streams_[source].get()),
               fmt::format("send from rank {}", t.source));
  }

  // The destination's stream applies what arrived to its work buffer.
  void receive(const Transfer& t, std::int64_t received_at) {
    if (t.elements() == 0) return;
    const auto destination = static_cast<std::size_t>(t.destination);
    std::byte* work = at(work_[destination], t.dest_begin);
    const std::byte* received = at(receive_, received_at);
    const cudaStream_t stream = streams_[destination].get();
    if (t.action == TransferAction::copy) {
      check_cuda(
          cudaMemcpyAsync(work, received, static_cast<std::size_t>(t.elements()) * element_bytes_,
                          cudaMemcpyDeviceToDevice, stream),
          fmt::format("copy into rank {}", t.destination));
      return;
    }
    launch_combine(dtype_, op_, t.action == TransferAction::reduce_received_left,
                   flush_subnormals_, work, received, t.elements(), stream);
  }

  // The step boundary: no stream goes on until every stream has done what it was given.
  void every_stream_waits_for_all() {
    for (std::size_t r = 0; r < streams_.size(); ++r) {
      check_cuda(cudaEventRecord(sent_[r].get(), streams_[r].get()), "cudaEventRecord");
    }
    for (const Stream& stream : streams_) {
      for (const Event& event : sent_) {
        check_cuda(cudaStreamWaitEvent(stream.get(), event.get(), 0), "cudaStreamWaitEvent");
      }
    }
  }

  const Schedule& schedule_;
  DType dtype_;
  ReduceOp op_;
  bool flush_subnormals_;
  std::size_t element_bytes_;
  std::vector<DeviceBuffer> inputs_;
  std::vector<DeviceBuffer> work_;
  DeviceBuffer receive_;
  std::vector<Stream> streams_;
  std::vector<Event> sent_;
};

}  // namespace

std::vector<Array> run_schedule_on_gpu(const Schedule& schedule, std::span<const Array> flat_inputs,
                                       ReduceOp op, const FloatNumerics& numerics) {
  schedule.validate();
  collectives::check_schedule_inputs(schedule, flat_inputs, op, "run_schedule_on_gpu");
  VirtualDevices devices(schedule, flat_inputs, op, numerics.flush_subnormals);
  for (std::size_t s = 0; s < schedule.steps.size(); ++s) devices.run_step(schedule.steps[s], s);
  return devices.results();
}

}  // namespace spmd::cuda
