#pragma once
// Which devices an HLO collective runs among, as XLA defines it.
//
// The replica_groups attribute in its three encodings: explicit lists ("{{0,1},{2,3}}", "{}" for
// one group of everyone), iota ("[2,4]<=[8]", "[4,2]<=[2,4]T(1,0)": the ids 0..n-1 laid out in the
// bracketed shape, transposed, one group per row) and mesh axes, which JAX prints since 0.10
// ("mesh['x'=2,'y'=4] {'y'}", optionally ", device_ids=(...)" after the mesh, and sub-axes
// "'y':(1)2"; the groups are the mesh's devices with the named axes moved last, in the order
// named, one group per combination of the others, as xla/hlo/ir/replica_group.cc computes).
//
// What the ids in a group mean depends on channel_id and use_global_device_ids
// (xla/service/collective_ops_utils GetCollectiveOpGroupMode): without channel_id they are
// replica ids (the group is formed in every partition); with channel_id and no
// use_global_device_ids attribute (all-to-all, collective-permute, collective-broadcast) partition
// ids (in every replica); with use_global_device_ids=false replica ids whose groups take every
// partition of their replicas; with use_global_device_ids=true global device ids
// (replica × num_partitions + partition). A global device id is the simulated device.

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace spmd::hlo {

using DeviceGroups = std::vector<std::vector<int>>;

enum class GroupMode { cross_replica, cross_partition, cross_replica_and_partition, flattened_id };

// spmd::Error for channel_id absent with use_global_device_ids=true, as XLA rejects it.
GroupMode collective_group_mode(bool has_channel_id, std::optional<bool> use_global_device_ids);

// The groups as written (ids in the mode's id space; "{}" gives no groups). spmd::Error without a
// location for text in none of the three encodings.
DeviceGroups parse_replica_groups(std::string_view text);

// The groups of global device ids. No groups: one group of every id of the mode's space.
// spmd::Error for an id outside that space.
DeviceGroups global_device_groups(const DeviceGroups& groups, GroupMode mode, int replica_count,
                                  int num_partitions);

// source_target_pairs ("{{0,1},{1,2}}") in global device ids: partition ids with channel_id (in
// every replica), replica ids without (in every partition).
std::vector<std::pair<int, int>> global_source_target_pairs(std::string_view text,
                                                            bool has_channel_id,
                                                            int replica_count, int num_partitions);

}  // namespace spmd::hlo
