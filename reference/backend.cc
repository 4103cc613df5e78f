#include "reference/backend.h"

namespace spmd {
namespace {
thread_local int device_scope_depth = 0;
}  // namespace

DeviceScope::DeviceScope() { ++device_scope_depth; }
DeviceScope::~DeviceScope() { --device_scope_depth; }
bool DeviceScope::active() { return device_scope_depth > 0; }

}  // namespace spmd
