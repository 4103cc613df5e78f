# Sourced by the tools that regenerate a section of a doc page between two marker lines
# (regenerate-validation.sh, regenerate-training-validation.sh, regenerate-published-training.sh).

# require_doc_markers DOC BEGIN END: exit 2 unless each marker stands on a line of its own, once.
require_doc_markers() {
  local doc=$1 marker
  for marker in "$2" "$3"; do
    if [ "$(grep -cxF "$marker" "$doc")" != 1 ]; then
      echo "$doc: expected the line $marker exactly once" >&2
      exit 2
    fi
  done
}

# write_doc_section DOC BEGIN END SECTION: everything up to the begin marker, SECTION's lines,
# everything from the end marker on.
write_doc_section() {
  local doc=$1 begin=$2 end=$3 section=$4
  require_doc_markers "$doc" "$begin" "$end"
  awk -v begin="$begin" -v end="$end" -v section="$section" '
    $0 == begin { print; while ((getline line < section) > 0) print line; skipping = 1; next }
    $0 == end { skipping = 0 }
    !skipping { print }
  ' "$doc" > "$doc.section-tmp"
  mv "$doc.section-tmp" "$doc"
}
