#!/usr/bin/env python3
"""The docs' C++ samples compile: every fenced block tagged cpp or c++ in README.md and
docs/*.md is built against an installed copy of spmdsim, as a reader would build it.

Each sample is a translation unit of its own. A complete program (it defines main) is linked and
run from the source folder, where the docs' relative paths (docs/machines/...) point. Any other
sample (functions, declarations) is compiled and linked with an empty main, so every function
it calls must exist in the installed libraries. Warnings are errors, as in the project's own
build. A `#line` directive makes the compiler name the markdown file and line.

A block shown for reading only (an excerpt of an interface, code that needs the reader's own
classes) is marked by the comment `<!-- sample: fragment -->` on the line before its fence and
is not compiled. Keep such marks rare: a sample that compiles is a sample that works.

usage: doc_samples.py --source-dir DIR --build-dir DIR --work-dir DIR [--cxx-compiler PATH]
                      [--compiler-launcher PATH]
"""

import argparse
import dataclasses
import pathlib
import re
import subprocess
import sys

FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`\s]*)")
MARK = re.compile(r"^\s*<!--\s*sample:\s*(?P<kind>[\w-]+)\s*-->\s*$")
MAIN = re.compile(r"\bint\s+main\s*\(")
CPP_TAGS = {"cpp", "c++"}
KNOWN_MARKS = {"fragment"}
RUN_TIMEOUT_S = 60


class DocError(Exception):
    """A markdown file the extractor cannot read as the docs intend: FILE:LINE: what."""


@dataclasses.dataclass
class Sample:
    doc: str          # the markdown file, relative to the source folder
    first_line: int   # the line of the sample's first line of code (1-based)
    code: str
    fragment: bool

    @property
    def name(self):  # a target name: docs_simulator_md_8
        return re.sub(r"\W", "_", f"{self.doc}_{self.first_line}")

    @property
    def is_program(self):
        return MAIN.search(self.code) is not None

    @property
    def where(self):
        return f"{self.doc}:{self.first_line}"


def samples_of(doc, text):
    """The cpp / c++ blocks of one markdown file, in order."""
    samples = []
    lines = text.splitlines()
    mark = None  # (kind, line) of a `<!-- sample: ... -->` waiting for its fence
    i = 0
    while i < len(lines):
        line_number = i + 1
        opening = FENCE.match(lines[i])
        marked = MARK.match(lines[i])
        if marked:
            if marked["kind"] not in KNOWN_MARKS:
                raise DocError(f"{doc}:{line_number}: unknown sample mark '{marked['kind']}'; "
                               f"expected one of {sorted(KNOWN_MARKS)}")
            mark = (marked["kind"], line_number)
            i += 1
            continue
        if mark and lines[i].strip() and not (opening and opening["info"].lower() in CPP_TAGS):
            raise DocError(f"{doc}:{mark[1]}: the sample mark '{mark[0]}' must come just before "
                           "a ```cpp block")
        if not opening:
            i += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        closing = re.compile(rf"^\s*{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        end = i + 1
        while end < len(lines) and not closing.match(lines[end]):
            end += 1
        if end == len(lines):
            raise DocError(f"{doc}:{line_number}: the code block opened here is never closed")
        if opening["info"].lower() in CPP_TAGS:
            # Lines of a block indented in a list lose the fence's indentation.
            code = "\n".join(line[indent:] if not line[:indent].strip() else line.lstrip()
                             for line in lines[i + 1:end])
            samples.append(Sample(doc, line_number + 1, code + "\n",
                                  fragment=mark is not None and mark[0] == "fragment"))
        mark = None
        i = end + 1
    return samples


def all_samples(source_dir):
    docs = [source_dir / "README.md"] + sorted((source_dir / "docs").glob("*.md"))
    samples = []
    for path in docs:
        doc = path.relative_to(source_dir).as_posix()
        samples += samples_of(doc, path.read_text(encoding="utf-8"))
    return samples


def write_if_changed(path, text):
    """Unchanged files keep their time stamps, so a rerun rebuilds only what changed."""
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def write_project(project_dir, compiled):
    """A CMake project with one executable per sample, all in bin/."""
    sources_dir = project_dir / "samples"
    sources_dir.mkdir(parents=True, exist_ok=True)
    wanted = {f"{sample.name}.cc" for sample in compiled} | {"empty_main.cc"}
    for stale in sources_dir.iterdir():
        if stale.name not in wanted:
            stale.unlink()
    write_if_changed(sources_dir / "empty_main.cc",
                     "// Links the samples that are not programs.\nint main() { return 0; }\n")
    cmake = [
        "# Generated by tests/doc_samples.py: one executable per C++ sample of the docs.",
        "cmake_minimum_required(VERSION 3.25)",
        "project(spmdsim_doc_samples LANGUAGES CXX)",
        "find_package(spmdsim CONFIG REQUIRED COMPONENTS testing)",
        "set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)",
        # The project's own warnings (designated initializers leave the rest default).
        "add_compile_options(-Wall -Wextra -Wpedantic -Wno-missing-field-initializers -Werror)",
        "add_library(empty_main OBJECT samples/empty_main.cc)",
    ]
    for sample in compiled:
        source = f"samples/{sample.name}.cc"
        write_if_changed(project_dir / source,
                         f'#line {sample.first_line} "{sample.doc}"\n{sample.code}')
        extra = "" if sample.is_program else " $<TARGET_OBJECTS:empty_main>"
        cmake.append(f"add_executable({sample.name} {source}{extra})")
        cmake.append(f"target_link_libraries({sample.name} PRIVATE spmdsim::spmdsim spmdsim::testing)")
    write_if_changed(project_dir / "CMakeLists.txt", "\n".join(cmake) + "\n")


def run_step(what, command, **kwargs):
    print(f"-- {what}: {' '.join(map(str, command))}", flush=True)
    return subprocess.run(command, **kwargs).returncode


def build_samples(args, compiled):
    """Installs the build, then builds the samples' project; its build folder, None if the
    install or the configure failed. A sample that does not compile has no executable."""
    prefix, project, build = (args.work_dir / "prefix", args.work_dir / "project",
                              args.work_dir / "build")
    write_project(project, compiled)
    if run_step("install", ["cmake", "--install", args.build_dir, "--prefix", prefix],
                stdout=subprocess.DEVNULL) != 0:
        return None
    configure = ["cmake", "-S", project, "-B", build, "-G", "Ninja",
                 f"-DCMAKE_PREFIX_PATH={prefix}"]
    if args.cxx_compiler:
        configure.append(f"-DCMAKE_CXX_COMPILER={args.cxx_compiler}")
    if args.compiler_launcher:
        configure.append(f"-DCMAKE_CXX_COMPILER_LAUNCHER={args.compiler_launcher}")
    if run_step("configure", configure, stdout=subprocess.DEVNULL) != 0:
        return None
    # A sample that fails now must not pass on an executable left from an earlier run.
    for sample in compiled:
        (build / "bin" / sample.name).unlink(missing_ok=True)
    run_step("build", ["cmake", "--build", build, "--", "-k", "0"])  # keep going: all failures
    return build


def run_program(executable, source_dir):
    """None when the program exits with 0, else what went wrong."""
    try:
        exit_code = run_step("run", [executable], cwd=source_dir, timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"did not exit within {RUN_TIMEOUT_S} s"
    if exit_code < 0:
        return f"was killed by signal {-exit_code}"
    return f"exited with code {exit_code}" if exit_code != 0 else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source-dir", type=pathlib.Path, required=True)
    parser.add_argument("--build-dir", type=pathlib.Path, required=True)
    parser.add_argument("--work-dir", type=pathlib.Path, required=True)
    parser.add_argument("--cxx-compiler")
    parser.add_argument("--compiler-launcher")
    args = parser.parse_args()

    try:
        samples = all_samples(args.source_dir)
    except DocError as error:
        print(f"error: {error}")
        return 1
    compiled = [sample for sample in samples if not sample.fragment]
    for sample in samples:
        kind = "fragment, not compiled" if sample.fragment else (
            "program, built and run" if sample.is_program else "compiled and linked")
        print(f"{sample.where}: {kind}")
    if not compiled:
        print("error: no C++ samples found in README.md and docs/*.md")
        return 1

    build = build_samples(args, compiled)
    if build is None:
        return 1
    failures = []
    for sample in compiled:
        executable = build / "bin" / sample.name
        if not executable.exists():
            failures.append(f"{sample.where}: the sample does not compile or link "
                            "(the compiler's messages above)")
        elif sample.is_program:
            problem = run_program(executable, args.source_dir)
            if problem:
                failures.append(f"{sample.where}: the program {problem}")
    for failure in failures:
        print(f"error: {failure}")
    fragments = len(samples) - len(compiled)
    print(f"{len(compiled) - len(failures)} of {len(compiled)} C++ samples work "
          f"({fragments} marked as fragments, not compiled)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
