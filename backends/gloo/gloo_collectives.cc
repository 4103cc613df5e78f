#include "backends/gloo/gloo_collectives.h"

#include <fmt/format.h>
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/alltoall.h>
#include <gloo/broadcast.h>
#include <gloo/reduce_scatter.h>

#include <string>
#include <type_traits>
#include <vector>

#include "reference/error.h"

namespace spmd::gloo_backend {
namespace {

template <class T>
constexpr bool kSummable = std::is_same_v<T, double> || std::is_same_v<T, float> ||
                           std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::int32_t>;

// Calls visitor(T{}) for the element type of x; spmd::Error for dtypes Gloo does not sum here.
template <class Visitor>
Array with_element_type(const Array& x, const char* what, Visitor&& visitor) {
  return visit_dtype(x.dtype(), [&](auto tag) -> Array {
    using T = decltype(tag);
    if constexpr (kSummable<T>) {
      return visitor(tag);
    } else {
      throw Error(std::string(what) + " of " + std::string(dtype_name(x.dtype())) +
                  ", expected float64, float32, int64 or int32");
    }
  });
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

// gloo's reduction function for AllreduceOptions: c[i] = a[i] + b[i].
template <class T>
void sum_into(void* c, const void* a, const void* b, std::size_t n) {
  auto* out = static_cast<T*>(c);
  const auto* lhs = static_cast<const T*>(a);
  const auto* rhs = static_cast<const T*>(b);
  for (std::size_t i = 0; i < n; ++i) out[i] = lhs[i] + rhs[i];
}

template <class T>
void run_allreduce(const ContextPtr& context, T* data, std::size_t count,
                   gloo::AllreduceOptions::Algorithm algorithm) {
  gloo::AllreduceOptions options(context);
  options.setAlgorithm(algorithm);
  options.setOutput(data, count);
  options.setReduceFunction(&sum_into<T>);
  gloo::allreduce(options);
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

Array all_reduce_sum(const ContextPtr& context, const Array& x, AllReduceAlgorithm algorithm) {
  return with_element_type(x, "Gloo all-reduce", [&](auto tag) {
    using T = decltype(tag);
    Array out = x;
    T* data = out.template mutable_values<T>().data();
    const auto count = static_cast<std::size_t>(x.size());
    switch (algorithm) {
      case AllReduceAlgorithm::ring:
        run_allreduce(context, data, count, gloo::AllreduceOptions::Algorithm::RING);
        break;
      case AllReduceAlgorithm::bcube:
        run_allreduce(context, data, count, gloo::AllreduceOptions::Algorithm::BCUBE);
        break;
      case AllReduceAlgorithm::ring_chunked:
        gloo::AllreduceRingChunked<T>(context, {data}, static_cast<int>(count)).run();
        break;
    }
    return out;
  });
}

Array all_gather(const ContextPtr& context, const Array& x) {
  return with_element_type(x, "Gloo all-gather", [&](auto tag) {
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

Array reduce_scatter_sum(const ContextPtr& context, const Array& x) {
  const std::int64_t block = block_elements(context, x, "Gloo reduce-scatter");
  return with_element_type(x, "Gloo reduce-scatter", [&](auto tag) {
    using T = decltype(tag);
    Array buffer = x;
    T* data = buffer.template mutable_values<T>().data();
    const std::vector<int> block_sizes(static_cast<std::size_t>(context->size),
                                       static_cast<int>(block));
    gloo::ReduceScatterHalvingDoubling<T>(context, {data}, static_cast<int>(x.size()), block_sizes)
        .run();
    // The rank's own block ends up at the start of the buffer (reduce_scatter.h, distribution).
    return slice(buffer, 0, 0, block);
  });
}

Array all_to_all(const ContextPtr& context, const Array& x) {
  block_elements(context, x, "Gloo all-to-all");
  return with_element_type(x, "Gloo all-to-all", [&](auto tag) {
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
  return with_element_type(x, "Gloo broadcast", [&](auto tag) {
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

}  // namespace spmd::gloo_backend
