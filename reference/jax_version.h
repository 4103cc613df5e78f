#pragma once
// Which JAX release's rules the reference follows where releases differ
// (docs/jax-differences.md, "JAX 0.12"): JAX 0.12 (0.12.0.1) by default, 0.10 (0.10.2) on
// request (`spmdsim conform --jax-version 0.10`, ShardMapOptions / PmapOptions::jax_version).
// The differences are all checks made before a collective runs:
//   - ppermute / pshuffle over several axes named in another order than the mesh's: 0.12 raises
//     a RuntimeError; 0.10 orders the group by mesh order (sorted device ids) silently.
//   - pmax / pmin under check_vma over axes the input varies over and axes it does not: 0.12
//     raises the ValueError psum raises in both.
//   - negative psum_scatter scatter_dimension and all_to_all split / concat axes: 0.12 counts
//     them from the end; 0.10.2 fails to lower them (all_to_all crashes the process).

#include <string>
#include <string_view>

namespace spmd {

enum class JaxVersion { v0_10, v0_12 };

inline constexpr JaxVersion kDefaultJaxVersion = JaxVersion::v0_12;

// "0.10" or "0.12".
std::string_view jax_version_name(JaxVersion version);

// "0.10" or "0.12" (also the full releases "0.10.2", "0.12.0.1"); anything else is an
// spmd::Error naming the value and the versions expected.
JaxVersion jax_version_from_name(std::string_view name);

}  // namespace spmd
