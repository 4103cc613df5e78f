"""pytest setup: 8 fake CPU devices for JAX in this process (set before JAX is imported), the
repository root for the committed conformance cases, the docs' examples importable."""

import os
import pathlib
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
# The docs' examples (python/examples) are imported by the tests that hold them to their claims.
sys.path.insert(0, str(REPOSITORY / "python" / "examples"))
CASES = REPOSITORY / "tests" / "conformance" / "cases"
