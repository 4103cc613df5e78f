// libFuzzer harness for the training workload reader and the training model behind
// `spmdsim train` (training/training_workload.h, docs/workload-format.md "training"): any file
// is either read and its step predicted (or listed as not predictable), or rejected with
// spmd::Error; anything else is a bug.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz/fuzz_input_file.h"
#include "reference/error.h"
#include "training/training_prediction.h"
#include "training/training_workload.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = spmd::fuzz::write_fuzz_input(data, size, "job.json");
  try {
    const std::vector<spmd::training::PublishedRun> runs = {
        spmd::training::load_training_workload(path)};
    spmd::training::predict_runs(runs);
  } catch (const spmd::Error&) {
    // Rejected with a clear error: the expected outcome for malformed input.
  }
  return 0;
}
