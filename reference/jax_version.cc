#include "reference/jax_version.h"

#include <fmt/format.h>

#include "reference/error.h"

namespace spmd {

std::string_view jax_version_name(JaxVersion version) {
  return version == JaxVersion::v0_10 ? "0.10" : "0.12";
}

JaxVersion jax_version_from_name(std::string_view name) {
  if (name == "0.10" || name == "0.10.2") return JaxVersion::v0_10;
  if (name == "0.12" || name == "0.12.0.1") return JaxVersion::v0_12;
  throw Error(fmt::format("\"{}\" is no JAX version the reference follows, expected 0.10 or 0.12",
                          name));
}

}  // namespace spmd
