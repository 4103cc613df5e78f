#pragma once
// Why an algorithm did not run a call ("torus cannot run all_reduce over 16 ranks; used ring"):
// the cost log keeps it per collective (algorithm_note, in report.json); the commands that
// simulate print each distinct reason once, as a note on stderr.

#include <ostream>
#include <set>
#include <string>

#include "sim/cost_log.h"

namespace spmd {

class AlgorithmNotes {
 public:
  void add(const sim::CostLog& log);
  void add(const sim::CollectiveRecord& record);
  // One line "note: <reason>" per distinct reason, sorted; none when every request was honoured.
  void print(std::ostream& err) const;

 private:
  std::set<std::string> notes_;
};

}  // namespace spmd
