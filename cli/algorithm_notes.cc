#include "cli/algorithm_notes.h"

namespace spmd {

void AlgorithmNotes::add(const sim::CostLog& log) {
  for (const sim::CollectiveRecord& record : log.collectives) add(record);
}

void AlgorithmNotes::add(const sim::CollectiveRecord& record) {
  if (!record.algorithm_note.empty()) notes_.insert(record.algorithm_note);
}

void AlgorithmNotes::print(std::ostream& err) const {
  for (const std::string& note : notes_) err << "note: " << note << '\n';
  err.flush();
}

}  // namespace spmd
