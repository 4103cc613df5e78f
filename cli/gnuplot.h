#pragma once
// Drawing PNG plots with gnuplot (Debian gnuplot-nox), for the commands that plot (scale,
// validate): the one place that knows how spmdsim finds and calls it.

#include <filesystem>
#include <string>
#include <string_view>

namespace spmd {

// Whether `gnuplot` is on PATH.
bool gnuplot_on_path();
// `text` as a gnuplot string in single quotes ('' inside for each ').
std::string gnuplot_quoted(std::string_view text);
// Runs `gnuplot SCRIPT`; spmd::Error naming the command when it fails, ending with `how_to_skip`
// ("--no-plot skips the plot").
void run_gnuplot(const std::filesystem::path& script, std::string_view how_to_skip);

}  // namespace spmd
