#pragma once
// The five group operations (group_collectives.h) of a loaded plugin: each operation over a
// group runs one host thread per rank, each calling the plugin's per-rank function with that
// rank's own buffers, as a program calls NCCL or MPI; the host waits for every rank to return,
// up to a timeout.

#include <chrono>
#include <map>
#include <memory>
#include <stdexcept>
#include <vector>

#include "backends/group_collectives.h"
#include "backends/plugin/plugin_library.h"

namespace spmd::plugin {

// A plugin call that failed or did not return in time. Not an spmd::Error: it must end the run
// (the CLI turns it into one at the top, exit code 2) rather than pass for the error a
// conformance case expects.
class PluginError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class PluginCollectives : public GroupCollectives {
 public:
  // `call_timeout`: how long every rank of one operation has to return.
  PluginCollectives(std::shared_ptr<const PluginLibrary> plugin,
                    std::chrono::milliseconds call_timeout);
  // Destroys the groups it created, unless a call was abandoned (its group may still be in use).
  ~PluginCollectives() override;
  PluginCollectives(const PluginCollectives&) = delete;
  PluginCollectives& operator=(const PluginCollectives&) = delete;

  std::vector<Array> all_reduce(const GroupBuffers& group, ReduceOp op) override;
  std::vector<Array> all_gather(const GroupBuffers& group) override;
  std::vector<Array> reduce_scatter(const GroupBuffers& group, ReduceOp op) override;
  std::vector<Array> all_to_all(const GroupBuffers& group) override;
  std::vector<Array> permute(const GroupBuffers& group,
                             const std::vector<std::pair<int, int>>& pairs) override;

 private:
  // The plugin's group for these devices (in rank order), created on first use.
  spmdsim_group* group_for(const std::vector<int>& devices);

  std::shared_ptr<const PluginLibrary> plugin_;
  std::chrono::milliseconds call_timeout_;
  std::map<std::vector<int>, spmdsim_group*> groups_;
  bool abandoned_call_ = false;
};

}  // namespace spmd::plugin
