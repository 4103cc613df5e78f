#include "backends/plugin/plugin_collectives.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "backends/plugin/plugin_host.h"
#include "reference/check.h"

namespace spmd::plugin {
namespace {

// One rank's call of the plugin with everything but the rank and its buffers bound by value: a
// thread abandoned after a timeout may still run it after the operation has given up.
using RankCall = std::function<int(int rank, const void* send, void* recv)>;

// An operation in flight, owned jointly by the host and every rank's thread, so that a thread
// abandoned after a timeout never writes into freed memory.
struct OperationInFlight {
  RankCall call;
  std::vector<Array> sends;
  std::vector<Array> receives;  // zeros until the plugin writes them
  std::vector<const void*> send_data;
  std::vector<void*> receive_data;
  std::mutex mutex;
  std::condition_variable rank_returned;
  std::vector<bool> returned;
  int returned_count = 0;
  std::vector<std::optional<std::string>> failures;  // rank r's message when its call failed
};

void run_rank(const std::shared_ptr<OperationInFlight>& operation, int rank) {
  const auto r = static_cast<std::size_t>(rank);
  std::optional<std::string> failure;
  take_error_message();  // a message left on this thread belongs to no call of ours
  try {
    const int status = operation->call(rank, operation->send_data[r], operation->receive_data[r]);
    if (status != 0) failure = fmt::format("returned {}: {}", status, take_error_message());
  } catch (...) {
    failure = "threw a C++ exception through the C ABI";
  }
  std::lock_guard lock(operation->mutex);
  operation->failures[r] = std::move(failure);
  operation->returned[r] = true;
  ++operation->returned_count;
  operation->rank_returned.notify_all();
}

// "all_reduce of float32[8] on each of 4 ranks (devices 0,1,2,3)"
std::string describe(const std::string& operation, const GroupBuffers& group) {
  return fmt::format("{} of {} on each of {} ranks (devices {})", operation,
                     group.inputs.front().type_string(), group.size(),
                     fmt::join(group.devices, ","));
}

// A bool element is one byte, 0 or 1 (spmdsim_plugin.h); anything else is the plugin's bug and
// must not reach code that reads it as a C++ bool.
void check_bool_bytes(const std::vector<Array>& receives, const std::string& prefix) {
  if (receives.front().dtype() != DType::bool_) return;
  for (std::size_t r = 0; r < receives.size(); ++r) {
    const std::span<const std::byte> bytes = receives[r].bytes();
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      const auto value = std::to_integer<int>(bytes[i]);
      if (value > 1) {
        throw PluginError(fmt::format("{}: rank {}'s result has byte {} in bool element {}, "
                                      "expected 0 or 1",
                                      prefix, r, value, i));
      }
    }
  }
}

}  // namespace

PluginCollectives::PluginCollectives(std::shared_ptr<const PluginLibrary> plugin,
                                     std::chrono::milliseconds call_timeout)
    : plugin_(std::move(plugin)), call_timeout_(call_timeout) {}

PluginCollectives::~PluginCollectives() {
  if (abandoned_call_) return;  // leaked on purpose: a stuck rank may still use its group
  for (const auto& [devices, group] : groups_) plugin_->table->destroy_group(group);
}

spmdsim_group* PluginCollectives::group_for(const std::vector<int>& devices) {
  if (auto found = groups_.find(devices); found != groups_.end()) return found->second;
  take_error_message();
  spmdsim_group* group = nullptr;
  const int status =
      plugin_->table->create_group(static_cast<int>(devices.size()), devices.data(), &group);
  if (status != 0) {
    throw PluginError(fmt::format("plugin '{}': create_group of {} ranks (devices {}) returned "
                                  "{}: {}",
                                  plugin_->name, devices.size(), fmt::join(devices, ","), status,
                                  take_error_message()));
  }
  groups_.emplace(devices, group);
  return group;
}

namespace {

// Runs `call` on every rank of `group` at once, one thread per rank, with rank r's input as its
// send buffer and `receive_elements` zeros of the same dtype as its receive buffer; returns the
// receive buffers. Throws PluginError when a rank's call fails or any rank does not return
// within `timeout` (then `abandoned` is set and the threads are left running).
std::vector<Array> run_on_every_rank(const std::string& prefix, const GroupBuffers& group,
                                     std::int64_t receive_elements, RankCall call,
                                     std::chrono::milliseconds timeout, bool& abandoned) {
  const auto n = static_cast<std::size_t>(group.size());
  auto operation = std::make_shared<OperationInFlight>();
  operation->call = std::move(call);
  operation->sends = group.inputs;
  operation->returned.assign(n, false);
  operation->failures.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    operation->receives.emplace_back(group.inputs.front().dtype(), Shape{receive_elements});
    operation->send_data.push_back(operation->sends[r].bytes().data());
    operation->receive_data.push_back(operation->receives[r].mutable_bytes().data());
  }
  std::vector<std::thread> threads;
  for (std::size_t r = 0; r < n; ++r) threads.emplace_back(run_rank, operation, static_cast<int>(r));

  std::unique_lock lock(operation->mutex);
  if (!operation->rank_returned.wait_for(lock, timeout, [&] { return operation->returned_count ==
                                                                      static_cast<int>(n); })) {
    std::vector<std::size_t> stuck;
    for (std::size_t r = 0; r < n; ++r) {
      if (!operation->returned[r]) stuck.push_back(r);
    }
    for (std::thread& thread : threads) thread.detach();
    abandoned = true;
    throw PluginError(fmt::format("{} did not return within {:g} s on rank(s) {}, expected every "
                                  "rank to return once all {} had called it",
                                  prefix, std::chrono::duration<double>(timeout).count(),
                                  fmt::join(stuck, ", "), n));
  }
  lock.unlock();
  for (std::thread& thread : threads) thread.join();
  for (std::size_t r = 0; r < n; ++r) {
    if (operation->failures[r]) {
      throw PluginError(fmt::format("{} failed on rank {}: {}", prefix, r, *operation->failures[r]));
    }
  }
  check_bool_bytes(operation->receives, prefix);
  return operation->receives;
}

// The element count of each of a buffer's `parts` equal blocks (group_collectives.h promises
// buffers of whole blocks).
std::int64_t block_elements(const GroupBuffers& group) {
  const std::int64_t size = group.inputs.front().size();
  SPMD_CHECK(size % group.size() == 0,
             fmt::format("a buffer of {} elements is not {} equal blocks", size, group.size()));
  return size / group.size();
}

}  // namespace

std::vector<Array> PluginCollectives::all_reduce(const GroupBuffers& group, ReduceOp op) {
  const spmdsim_plugin* table = plugin_->table;
  spmdsim_group* g = group_for(group.devices);
  const spmdsim_dtype dtype = abi_dtype(group.inputs.front().dtype());
  const auto count = static_cast<std::size_t>(group.inputs.front().size());
  const spmdsim_reduce_op abi_op = abi_reduce_op(op);
  return run_on_every_rank(
      fmt::format("plugin '{}': {} ({})", plugin_->name, describe("all_reduce", group),
                  reduce_op_name(op)),
      group, group.inputs.front().size(),
      [=](int rank, const void* send, void* receive) {
        return table->all_reduce(g, rank, dtype, abi_op, send, receive, count);
      },
      call_timeout_, abandoned_call_);
}

std::vector<Array> PluginCollectives::all_gather(const GroupBuffers& group) {
  const spmdsim_plugin* table = plugin_->table;
  spmdsim_group* g = group_for(group.devices);
  const spmdsim_dtype dtype = abi_dtype(group.inputs.front().dtype());
  const std::int64_t send_count = group.inputs.front().size();
  return run_on_every_rank(
      fmt::format("plugin '{}': {}", plugin_->name, describe("all_gather", group)), group,
      send_count * group.size(),
      [=](int rank, const void* send, void* receive) {
        return table->all_gather(g, rank, dtype, send, receive,
                                 static_cast<std::size_t>(send_count));
      },
      call_timeout_, abandoned_call_);
}

std::vector<Array> PluginCollectives::reduce_scatter(const GroupBuffers& group, ReduceOp op) {
  const spmdsim_plugin* table = plugin_->table;
  spmdsim_group* g = group_for(group.devices);
  const spmdsim_dtype dtype = abi_dtype(group.inputs.front().dtype());
  const std::int64_t receive_count = block_elements(group);
  const spmdsim_reduce_op abi_op = abi_reduce_op(op);
  return run_on_every_rank(
      fmt::format("plugin '{}': {} ({})", plugin_->name, describe("reduce_scatter", group),
                  reduce_op_name(op)),
      group, receive_count,
      [=](int rank, const void* send, void* receive) {
        return table->reduce_scatter(g, rank, dtype, abi_op, send, receive,
                                     static_cast<std::size_t>(receive_count));
      },
      call_timeout_, abandoned_call_);
}

std::vector<Array> PluginCollectives::all_to_all(const GroupBuffers& group) {
  const spmdsim_plugin* table = plugin_->table;
  spmdsim_group* g = group_for(group.devices);
  const spmdsim_dtype dtype = abi_dtype(group.inputs.front().dtype());
  const std::int64_t block_count = block_elements(group);
  return run_on_every_rank(
      fmt::format("plugin '{}': {}", plugin_->name, describe("all_to_all", group)), group,
      group.inputs.front().size(),
      [=](int rank, const void* send, void* receive) {
        return table->all_to_all(g, rank, dtype, send, receive,
                                 static_cast<std::size_t>(block_count));
      },
      call_timeout_, abandoned_call_);
}

std::vector<Array> PluginCollectives::permute(const GroupBuffers& group,
                                              const std::vector<std::pair<int, int>>& pairs) {
  const spmdsim_plugin* table = plugin_->table;
  spmdsim_group* g = group_for(group.devices);
  const spmdsim_dtype dtype = abi_dtype(group.inputs.front().dtype());
  const auto count = static_cast<std::size_t>(group.inputs.front().size());
  std::vector<int> send_to(static_cast<std::size_t>(group.size()), -1);
  std::vector<int> receive_from(static_cast<std::size_t>(group.size()), -1);
  for (auto [source, destination] : pairs) {
    send_to[static_cast<std::size_t>(source)] = destination;
    receive_from[static_cast<std::size_t>(destination)] = source;
  }
  return run_on_every_rank(
      fmt::format("plugin '{}': {}", plugin_->name, describe("permute", group)), group,
      group.inputs.front().size(),
      [=](int rank, const void* send, void* receive) {
        const auto r = static_cast<std::size_t>(rank);
        return table->permute(g, rank, dtype, send, receive, count, send_to[r], receive_from[r]);
      },
      call_timeout_, abandoned_call_);
}

}  // namespace spmd::plugin
