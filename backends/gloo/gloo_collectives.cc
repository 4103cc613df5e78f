#include "backends/gloo/gloo_collectives.h"

#include <fmt/format.h>
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/alltoall.h>
#include <gloo/broadcast.h>

#include <string>
#include <vector>

#include "reference/combine_elements.h"
#include "reference/error.h"

namespace spmd::gloo_backend {
namespace {

// Calls visitor(T{}) for the element type of x: Gloo moves elements of any type.
template <class Visitor>
Array with_element_type(const Array& x, Visitor&& visitor) {
  return visit_dtype(x.dtype(), [&](auto tag) -> Array { return visitor(tag); });
}

std::int64_t block_elements(const ContextPtr& context, const Array& x, const char* what) {
  if (x.size() % context->size != 0) {
    throw Error(fmt::format("{} of {} elements, expected a multiple of the group size {}", what,
                            x.size(), context->size));
  }
  return x.size() / context->size;
}

[[noreturn]] void fail_unknown(AllReduceAlgorithm algorithm) {
  throw Error(fmt::format("Gloo all-reduce algorithm {}, expected ring, ring_chunked or bcube",
                          static_cast<int>(algorithm)));
}

template <class T>
void run_allreduce(const ContextPtr& context, T* data, std::size_t count,
                   gloo::AllreduceOptions::Algorithm algorithm, ReduceOp op) {
  gloo::AllreduceOptions options(context);
  options.setAlgorithm(algorithm);
  options.setOutput(data, count);
  // Gloo's reduce function: c[i] = a[i] op b[i].
  options.setReduceFunction([op](void* c, const void* a, const void* b, std::size_t n) {
    combine_elements(DTypeOf<T>::value, op, a, b, c, n);
  });
  gloo::allreduce(options);
}

// AllreduceRingChunked's reduction function: x[i] = x[i] op y[i].
template <class T, ReduceOp kOp>
void combine_in_place(T* x, const T* y, std::size_t n) {
  combine_elements(DTypeOf<T>::value, kOp, x, y, x, n);
}

template <class T>
void run_ring_chunked(const ContextPtr& context, T* data, int count, ReduceOp op) {
  static const gloo::ReductionFunction<T> sum(gloo::CUSTOM, &combine_in_place<T, ReduceOp::sum>);
  static const gloo::ReductionFunction<T> max(gloo::CUSTOM, &combine_in_place<T, ReduceOp::max>);
  static const gloo::ReductionFunction<T> min(gloo::CUSTOM, &combine_in_place<T, ReduceOp::min>);
  const gloo::ReductionFunction<T>* function =
      op == ReduceOp::sum ? &sum : (op == ReduceOp::max ? &max : &min);
  gloo::AllreduceRingChunked<T>(context, {data}, count, function).run();
}

}  // namespace

std::string_view all_reduce_algorithm_name(AllReduceAlgorithm algorithm) {
  switch (algorithm) {
    case AllReduceAlgorithm::ring: return "ring";
    case AllReduceAlgorithm::ring_chunked: return "ring_chunked";
    case AllReduceAlgorithm::bcube: return "bcube";
  }
  fail_unknown(algorithm);
}

ReductionAlgorithm reduction_order_of(AllReduceAlgorithm algorithm) {
  switch (algorithm) {
    case AllReduceAlgorithm::ring: return ReductionAlgorithm::gloo_ring;
    case AllReduceAlgorithm::ring_chunked: return ReductionAlgorithm::gloo_ring_chunked;
    case AllReduceAlgorithm::bcube: return ReductionAlgorithm::gloo_bcube;
  }
  fail_unknown(algorithm);
}

Array all_reduce(const ContextPtr& context, const Array& x, AllReduceAlgorithm algorithm,
                 ReduceOp op) {
  return with_element_type(x, [&](auto tag) {
    using T = decltype(tag);
    Array out = x;
    T* data = out.template mutable_values<T>().data();
    const auto count = static_cast<std::size_t>(x.size());
    switch (algorithm) {
      case AllReduceAlgorithm::ring:
        run_allreduce(context, data, count, gloo::AllreduceOptions::Algorithm::RING, op);
        break;
      case AllReduceAlgorithm::bcube:
        run_allreduce(context, data, count, gloo::AllreduceOptions::Algorithm::BCUBE, op);
        break;
      case AllReduceAlgorithm::ring_chunked:
        run_ring_chunked(context, data, static_cast<int>(count), op);
        break;
    }
    return out;
  });
}

Array all_gather(const ContextPtr& context, const Array& x) {
  return with_element_type(x, [&](auto tag) {
    using T = decltype(tag);
    Array out(x.dtype(), {x.size() * context->size});
    gloo::AllgatherOptions options(context);
    options.setInput(const_cast<T*>(x.template values<T>().data()),
                     static_cast<std::size_t>(x.size()));
    options.setOutput(out.template mutable_values<T>().data(),
                      static_cast<std::size_t>(out.size()));
    gloo::allgather(options);
    return out;
  });
}

Array all_to_all(const ContextPtr& context, const Array& x) {
  block_elements(context, x, "Gloo all-to-all");
  return with_element_type(x, [&](auto tag) {
    using T = decltype(tag);
    Array out(x.dtype(), x.shape());
    gloo::AlltoallOptions options(context);
    options.setInput(const_cast<T*>(x.template values<T>().data()),
                     static_cast<std::size_t>(x.size()));
    options.setOutput(out.template mutable_values<T>().data(),
                      static_cast<std::size_t>(out.size()));
    gloo::alltoall(options);
    return out;
  });
}

Array broadcast(const ContextPtr& context, const Array& x, int root) {
  return with_element_type(x, [&](auto tag) {
    using T = decltype(tag);
    Array out = x;
    gloo::BroadcastOptions options(context);
    options.setRoot(root);
    options.setOutput(out.template mutable_values<T>().data(),
                      static_cast<std::size_t>(out.size()));
    gloo::broadcast(options);
    return out;
  });
}

Array permute(const ContextPtr& context, const Array& x,
              const std::vector<std::pair<int, int>>& pairs) {
  const std::uint64_t slot = context->nextSlot();  // every rank takes the same one
  Array out = zeros_like(x);
  Array sent = x;  // Gloo's buffers are writable; keep x itself untouched
  auto send_buffer = context->createUnboundBuffer(sent.mutable_bytes().data(), sent.size_bytes());
  auto receive_buffer = context->createUnboundBuffer(out.mutable_bytes().data(), out.size_bytes());
  int sends = 0;
  bool receives = false;
  for (auto [source, destination] : pairs) {
    if (source == context->rank && destination == context->rank) {
      out = x;  // Gloo has no pair to itself
      continue;
    }
    if (source == context->rank) {
      send_buffer->send(destination, slot);
      ++sends;
    }
    if (destination == context->rank) {
      receive_buffer->recv(source, slot);
      receives = true;
    }
  }
  for (int k = 0; k < sends; ++k) send_buffer->waitSend();
  if (receives) receive_buffer->waitRecv();
  return out;
}

}  // namespace spmd::gloo_backend
