// The sharding grid (reference/sharding_grid.h): which devices hold which block, and the boxes'
// sizes, as jax.debug.visualize_sharding draws them; the text forms of meshes and specs
// (reference/sharding_text.h); HLO's sharding attribute read into the same grid
// (hlo/hlo_sharding.h).
//
// The expected block/device assignments and box sizes are what JAX 0.10.2 printed on 8 CPU
// devices (docs/sharding.md shows the command), e.g. for P('data', None) on a 16x8 array:
//   mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ('data', 'model'))
//   jax.debug.visualize_sharding((16, 8), NamedSharding(mesh, P('data', None)), use_color=False)
// prints two boxes, "CPU 0,1,2,3" over "CPU 4,5,6,7", 4 lines high; 10 characters wide inside
// (JAX's 12 less its 2 padding columns), which JAX's own longer label widens to 11.

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "hlo/hlo_sharding.h"
#include "reference/error.h"
#include "reference/sharding_grid.h"
#include "reference/sharding_text.h"
#include "tests/error_of.h"

namespace spmd {
namespace {

using test_errors::error_of;

const Mesh kMesh({2, 4}, {"data", "model"});

std::string grid_text(const std::string& spec, const std::vector<std::int64_t>& shape) {
  const PartitionSpec parsed = parse_partition_spec(spec, "spec");
  check_drawable_sharding(kMesh, parsed, shape, {});
  return sharding_grid_text(block_grid(kMesh, parsed, shape));
}

// The labels of the grid's boxes, row by row.
std::vector<std::vector<std::string>> labels(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("|")) continue;  // rules and titles
    std::vector<std::string> row;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, '|');) {
      const std::size_t first = cell.find_first_not_of(' ');
      if (first != std::string::npos) row.push_back(cell.substr(first, cell.find(' ', first) - first));
    }
    if (!row.empty()) rows.push_back(row);
  }
  return rows;
}

// Inside widths of the boxes of the first row, and text lines per row of boxes.
std::vector<int> box_widths(const std::string& text) {
  std::vector<int> widths;
  const std::string rule = text.substr(0, text.find('\n'));
  int width = 0;
  for (std::size_t i = 1; i < rule.size(); ++i) {
    if (rule[i] == '+') {
      widths.push_back(width);
      width = 0;
    } else {
      ++width;
    }
  }
  return widths;
}

std::vector<int> box_heights(const std::string& text) {
  std::vector<int> heights;
  std::istringstream lines(text);
  std::string top_rule;
  std::getline(lines, top_rule);
  int height = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("+")) {
      heights.push_back(height);
      height = 0;
    } else {
      ++height;
    }
  }
  return heights;
}

TEST(ShardingGrid, RowsSplitOverDataAsJaxDrawsThem) {
  EXPECT_EQ(grid_text("data,None", {16, 8}),
            "+----------+\n"
            "|          |\n"
            "| 0,1,2,3  |\n"
            "|          |\n"
            "|          |\n"
            "+----------+\n"
            "|          |\n"
            "| 4,5,6,7  |\n"
            "|          |\n"
            "|          |\n"
            "+----------+\n");
}

TEST(ShardingGrid, BlocksAndSizesEqualJaxs) {
  struct Expected {
    std::string spec;
    std::vector<std::int64_t> shape;
    std::vector<std::vector<std::string>> labels;
    std::vector<int> widths, heights;  // JAX's boxes: inside widths, lines per row
  };
  const std::vector<Expected> cases = {
      {"data,model", {16, 8}, {{"0", "1", "2", "3"}, {"4", "5", "6", "7"}}, {7, 7, 7, 7}, {4, 4}},
      {"None,(data,model)", {16, 8}, {{"0", "1", "2", "3", "4", "5", "6", "7"}},
       {7, 7, 7, 7, 7, 7, 7, 7}, {9}},
      {"model", {16}, {{"0,4", "1,5", "2,6", "3,7"}}, {7, 7, 7, 7}, {1}},
      {"(model,data)", {16}, {{"0", "4", "1", "5", "2", "6", "3", "7"}},
       {7, 7, 7, 7, 7, 7, 7, 7}, {1}},
      {"model,data", {8, 16}, {{"0", "4"}, {"1", "5"}, {"2", "6"}, {"3", "7"}}, {23, 23},
       {1, 1, 1, 1}},
      {"None", {8, 16}, {{"0,1,2,3,4,5,6,7"}}, {48}, {9}},
  };
  for (const Expected& e : cases) {
    const std::string text = grid_text(e.spec, e.shape);
    EXPECT_EQ(labels(text), e.labels) << e.spec << "\n" << text;
    EXPECT_EQ(box_widths(text), e.widths) << e.spec << "\n" << text;
    EXPECT_EQ(box_heights(text), e.heights) << e.spec << "\n" << text;
  }
}

TEST(ShardingGrid, ReplicatedBlocksListEveryHolderAndWidenForLongLabels) {
  const Mesh mesh({16}, {"i"});
  const std::string text = sharding_grid_text(block_grid(mesh, PartitionSpec(), {4}));
  EXPECT_EQ(labels(text), (std::vector<std::vector<std::string>>{
                              {"0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15"}}));
  // JAX's box would be 9 wide (7 inside); the 37-character label widens it.
  EXPECT_EQ(box_widths(text), std::vector<int>{37});
}

TEST(ShardingGrid, BadShardingsNameTheFieldValueAndExpectation) {
  const ShardingFields flags{.mesh = "--mesh", .spec = "--spec", .shape = "--shape"};
  auto error = [&](const std::string& spec, const std::vector<std::int64_t>& shape) {
    return error_of(
        [&] { check_drawable_sharding(kMesh, parse_partition_spec(spec, "--spec"), shape, flags); });
  };
  EXPECT_EQ(error("data,None,model", {16, 8}),
            "--spec: P('data', None, 'model') has 3 entries, expected at most 2, the rank of "
            "--shape 16,8");
  EXPECT_NE(error("x", {16, 8}).find("--spec: Resource axis: x of P('x') is not found"),
            std::string::npos);
  EXPECT_NE(error("data,data", {16, 8}).find("duplicate entries for `data`"), std::string::npos);
  EXPECT_EQ(error("None,model", {16, 6}),
            "--shape: dimension 1 of 16,6 is 6, split over mesh axes ('model',) of 4 devices by "
            "--spec P(None, 'model'), expected a multiple of 4");
  EXPECT_NE(error("data", {2, 2, 2}).find("--shape: 2,2,2 has rank 3, expected rank 1 or 2"),
            std::string::npos);
  // A mesh too large to list device by device is refused before the grid is laid out.
  const Mesh huge({2048, 1024}, {"data", "model"});
  EXPECT_EQ(error_of([&] {
              check_drawable_sharding(huge, parse_partition_spec("data", "--spec"), {2048}, flags);
            }),
            "--mesh: 2097152 devices, expected at most 1048576 for a grid drawn device by device");
}

TEST(ShardingText, ParsesMeshesSpecsAndShapes) {
  EXPECT_EQ(parse_mesh("2x4", "data,model", "--mesh", "--names"), kMesh);
  EXPECT_EQ(parse_partition_spec("(data,model),None", "s"),
            PartitionSpec({{"data", "model"}, {}}));
  EXPECT_EQ(parse_partition_spec("None", "s"), PartitionSpec(std::vector<SpecEntry>{SpecEntry{}}));
  EXPECT_EQ(parse_array_shape("16,8", "s"), (std::vector<std::int64_t>{16, 8}));
  EXPECT_EQ(error_of([] { parse_mesh("2x4", "data", "--mesh", "--names"); }),
            "--names: 'data' has 1 name, expected one per axis of --mesh 2x4: 2");
  EXPECT_NE(error_of([] { parse_mesh("2x0", "a,b", "--mesh", "--names"); })
                .find("--mesh: '2x0', expected positive axis sizes"),
            std::string::npos);
  for (const char* bad : {"(data", "data,", "data)", "(data,,model)", "da-ta"}) {
    EXPECT_NE(error_of([&] { parse_partition_spec(bad, "--spec"); })
                  .find(std::string("--spec: '") + bad + "', expected"),
              std::string::npos)
        << bad;
  }
}

// The sharding XLA writes for the Megatron program's w_in (tests/hlo/programs), P(None, 'model')
// on the (data 2, model 4) mesh: the same blocks and holders as the mesh and spec give.
TEST(HloSharding, IotaTransposeWithReplicasEqualsTheMeshAndSpec) {
  const hlo::TileSharding tiles = hlo::parse_tile_sharding(
      "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}", 2, 8, "w_in");
  EXPECT_EQ(tiles.tile_counts, (std::vector<std::int64_t>{1, 4}));
  const BlockGrid from_hlo = block_grid_from_tiles({32, 128}, tiles.tile_counts, tiles.device_tiles);
  const BlockGrid from_spec = block_grid(kMesh, PartitionSpec({{}, {"model"}}), {32, 128});
  EXPECT_EQ(from_hlo.holders, from_spec.holders);
  EXPECT_EQ(from_hlo.holders[0][1], (std::vector<int>{1, 5}));
}

TEST(HloSharding, ExplicitListsReplicatedAndMaximal) {
  const hlo::TileSharding listed = hlo::parse_tile_sharding("{devices=[2,2]0,2,1,3}", 2, 4, "f");
  EXPECT_EQ(listed.device_tiles, (std::vector<std::vector<std::int64_t>>{{0, 0}, {1, 0}, {0, 1},
                                                                         {1, 1}}));
  const hlo::TileSharding replicated = hlo::parse_tile_sharding("{replicated}", 1, 3, "f");
  EXPECT_EQ(replicated.device_tiles, (std::vector<std::vector<std::int64_t>>(3, {0})));
  const hlo::TileSharding maximal = hlo::parse_tile_sharding("{maximal device=1}", 1, 2, "f");
  EXPECT_EQ(maximal.device_tiles, (std::vector<std::vector<std::int64_t>>{{}, {0}}));
  EXPECT_EQ(error_of([] { hlo::parse_tile_sharding("{devices=[2,2]<=[4]}", 1, 4, "m.hlo:3"); }),
            "m.hlo:3: sharding={devices=[2,2]<=[4]}: 2 tile dimensions, expected 1 for a rank-1 "
            "array");
}

// A pmap module (replicas, no sharding attributes): each replica's argument is its row of an
// array stacked along a leading device axis.
TEST(HloSharding, PmapModulesStackReplicasAlongADeviceAxis) {
  const hlo::HloModule module = hlo::parse_hlo_module(R"(HloModule pmap_f, replica_count=4

ENTRY %main (x: f32[6]) -> f32[6] {
  %x = f32[6]{0} parameter(0)
  ROOT %r = f32[6]{0} all-reduce(%x), replica_groups={{0,1,2,3}}, to_apply=%add
}
)", "pmap.hlo");
  const std::string text = hlo::module_sharding_text(module);
  EXPECT_EQ(text.rfind("sharding (device ids are replica ids):\ninput 0 (x): f32[4,6] pmap: "
                       "replica r holds [r] of a leading device axis of 4\n",
                       0),
            0u)
      << text;
  EXPECT_EQ(labels(text), (std::vector<std::vector<std::string>>{{"0"}, {"1"}, {"2"}, {"3"},
                                                                  {"0"}, {"1"}, {"2"}, {"3"}}))
      << text;
}

}  // namespace
}  // namespace spmd
