"""spmdsim.conform: conformance cases (docs/conformance-format.md) run on the reference or the
simulator and compared bit for bit with what JAX gave, as ``spmdsim conform`` does."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import _core


@dataclass(frozen=True)
class CaseResult:
    """One case's verdict: passed, or the first difference (failure) or why it could not run
    (error), each one line."""

    file: str
    name: str
    passed: bool
    failure: str = ""
    error: str = ""
    notes: list[str] = field(default_factory=list)
    order_unspecified: bool = False


@dataclass(frozen=True)
class ConformReport:
    """Every case's result; ``passed`` when all passed."""

    cases: list[CaseResult]

    @property
    def passed(self) -> bool:
        return bool(self.cases) and all(case.passed for case in self.cases)

    def summary(self) -> str:
        """``"41 passed, 0 failed"``, as the CLI ends its report."""
        passed = sum(case.passed for case in self.cases)
        return f"{passed} passed, {len(self.cases) - passed} failed"


def _with_absolute_files(case: dict[str, Any], base_dir: Path) -> dict[str, Any]:
    """The case with its .npy file names resolved against base_dir."""
    def resolve(entry: Any) -> Any:
        if isinstance(entry, dict):
            return {key: str(base_dir / value) if key == "file" else resolve(value)
                    for key, value in entry.items()}
        if isinstance(entry, list):
            return [resolve(item) for item in entry]
        return entry
    return resolve(case)


def _run_json(case: dict[str, Any], base_dir: Path, options: dict[str, Any]) -> ConformReport:
    """A case given as JSON: written to a temporary file, its .npy files found in base_dir."""
    with tempfile.TemporaryDirectory(prefix="spmdsim-case-") as folder:
        path = Path(folder) / f"{case.get('name', 'case')}.json"
        path.write_text(json.dumps(_with_absolute_files(case, base_dir)))
        return _run_paths([str(path)], options)


def _run_paths(paths: list[str], options: dict[str, Any]) -> ConformReport:
    results = _core.conform_cases(paths, **options)
    return ConformReport([CaseResult(**result) for result in results])


def conform(case_path_or_json: str | os.PathLike[str] | dict[str, Any], backend: str = "reference",
            *, order: str | None = None, algorithm: str | None = None, topology: str = "ring",
            base_dir: str | os.PathLike[str] | None = None,
            jax_version: str = "0.12") -> ConformReport:
    """Runs conformance cases and compares each with its expected outputs or error.

    Args:
      case_path_or_json: a case file (NAME.json), a folder of cases (searched recursively), a
        case as a dict, or its JSON text.
      backend: ``"reference"`` or ``"sim"`` (the simulator).
      order: the reduction order the backend folds in; default: each case's own.
      algorithm: with backend ``"sim"``, the simulator's collective algorithm (direct, ring,
        bidirectional_ring, halving_doubling, binary_tree, double_binary_tree), compared with the
        reference folding in that algorithm's order.
      topology: with backend ``"sim"``: ring, torus:AxB, switch, hierarchical:K, ...
      base_dir: where a dict / JSON case's .npy files are (default: the current folder).
      jax_version: the JAX whose rules a case that states none is held to, ``"0.12"`` (today's)
        or ``"0.10"`` (docs/jax-differences.md); ``spmdsim conform --jax-version``.

    Returns:
      A ConformReport: ``.passed``, ``.summary()``, and ``.cases`` with each case's details.

    Raises:
      ValueError: a bad argument, or a path that does not exist, in one line.
    """
    options = {"backend": backend, "order": order, "algorithm": algorithm, "topology": topology,
               "jax_version": jax_version}
    if isinstance(case_path_or_json, dict):
        return _run_json(case_path_or_json, Path(base_dir or os.getcwd()), options)
    if isinstance(case_path_or_json, str) and case_path_or_json.lstrip().startswith("{"):
        try:
            case = json.loads(case_path_or_json)
        except json.JSONDecodeError as error:
            raise ValueError(f"case_path_or_json: not valid JSON ({error}), expected a case "
                             "object or a path") from None
        return _run_json(case, Path(base_dir or os.getcwd()), options)
    return _run_paths([os.fspath(case_path_or_json)], options)
