#pragma once
// CLI11's two classes that the commands' headers name, declared only: the headers pass them by
// reference or pointer, and CLI/CLI.hpp, which takes several seconds to compile, is then included
// only by the sources that add flags (cli/*_command.cc, cli/spmdsim.cc), not by every test.

namespace CLI {
class App;
class Option;
}  // namespace CLI
