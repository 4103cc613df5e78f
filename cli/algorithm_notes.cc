#include "cli/algorithm_notes.h"

#include <iostream>

namespace spmd {

void AlgorithmNotes::add(const sim::CostLog& log) {
  for (const sim::CollectiveRecord& record : log.collectives) add(record);
}

void AlgorithmNotes::add(const sim::CollectiveRecord& record) {
  if (!record.algorithm_note.empty()) notes_.insert(record.algorithm_note);
}

void AlgorithmNotes::print(std::ostream& err) const {
  std::cout.flush();  // the notes follow what stdout printed before them, in a terminal too
  for (const std::string& note : notes_) err << "note: " << note << '\n';
  err.flush();
}

}  // namespace spmd
