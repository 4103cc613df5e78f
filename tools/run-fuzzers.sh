#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/) in the asan preset's tree (clang 16, ASan, UBSan, in
# build-asan, which tools/run-sanitized-tests.sh builds too) and runs each for SECONDS (default
# 30), starting from its seed corpus in fuzz/corpus/<harness>/ (docs/sanitizers.md), as many at
# once as the machine has cores, each into build-asan/fuzz-logs/<harness>.log, shown once all
# have run. New inputs go to build-asan/corpus/<harness>/, never into the repository; a crash, a
# sanitizer report, an input slower than 10 s or 2 GiB of memory stops that harness, leaves the
# input in build-asan/findings/ and fails the script.
# usage: tools/run-fuzzers.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
tools/install-deps.sh  # clang 16 and its libFuzzer runtime among them
harnesses=(npy_fuzzer units_fuzzer machine_file_fuzzer workload_fuzzer conformance_case_fuzzer
           nccl_tests_log_fuzzer calibration_file_fuzzer training_workload_fuzzer)
cmake --preset asan
cmake --build --preset asan --target "${harnesses[@]}"
mkdir -p build-asan/findings
# A report's stack is written through addr2line (docs/sanitizers.md says why).
export ASAN_OPTIONS="${ASAN_OPTIONS:-external_symbolizer_path=/usr/bin/addr2line}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:external_symbolizer_path=/usr/bin/addr2line}"
# One harness per core at a time, each into its own log, printed in order once all have run.
logs=build-asan/fuzz-logs
rm -rf "$logs"
mkdir -p "$logs"
run_harness() {
  local harness=$1 rc=0
  mkdir -p "build-asan/corpus/$harness"
  build-asan/bin/"$harness" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="build-asan/findings/$harness-" \
    "build-asan/corpus/$harness" "fuzz/corpus/$harness" > "$logs/$harness.log" 2>&1 || rc=$?
  echo "$rc" > "$logs/$harness.rc"
}
for harness in "${harnesses[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
  run_harness "$harness" &
done
wait
failed=()
for harness in "${harnesses[@]}"; do
  echo "== $harness for ${seconds} s"
  tail -n 40 "$logs/$harness.log"
  [ "$(cat "$logs/$harness.rc")" = 0 ] || failed+=("$harness")
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzers that found something: ${failed[*]} (inputs in build-asan/findings/)" >&2
  exit 1
fi
echo "every harness ran ${seconds} s clean"
