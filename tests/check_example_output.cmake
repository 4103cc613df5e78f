# Runs one `spmdsim examples` invocation and compares its output with the stored file byte for
# byte; on a difference, prints a unified diff (expected first) and fails.
#   cmake -DSPMDSIM=... -DEXPECTED=examples/expected/NAME.txt -DACTUAL=OUT.txt
#         [-DNAME=NAME] -P check_example_output.cmake
# Without NAME the whole `spmdsim examples` run is checked: its header line, then each example's
# stored output after a blank line, in the order `spmdsim examples --list` gives; EXPECTED is then
# the folder of stored outputs, and every listed example must have one.
if(NAME)
  set(arguments examples ${NAME})
  set(expected_file ${EXPECTED})
else()
  execute_process(COMMAND ${SPMDSIM} examples --list OUTPUT_VARIABLE listing
                  RESULT_VARIABLE list_status)
  if(NOT list_status EQUAL 0)
    message(FATAL_ERROR "spmdsim examples --list exited with ${list_status}")
  endif()
  set(expected_text "spmdsim examples: the worked examples of five JAX pmap / shard_map tutorials (docs/examples.md) on the reference backend\n")
  # Each line of the listing starts with a name (the rest may hold any character).
  string(REGEX MATCHALL "(^|\n)[a-z0-9_]+" names "${listing}")
  foreach(name IN LISTS names)
    string(STRIP "${name}" name)
    if(NOT EXISTS ${EXPECTED}/${name}.txt)
      message(FATAL_ERROR "example ${name} has no stored output: write it with\n"
                          "  build/bin/spmdsim examples ${name} > examples/expected/${name}.txt")
    endif()
    file(READ ${EXPECTED}/${name}.txt text)
    string(APPEND expected_text "\n${text}")
  endforeach()
  set(arguments examples)
  set(expected_file ${ACTUAL}.expected)
  file(WRITE ${expected_file} "${expected_text}")
endif()

string(JOIN " " command spmdsim ${arguments})
execute_process(COMMAND ${SPMDSIM} ${arguments} OUTPUT_FILE ${ACTUAL} ERROR_VARIABLE errors
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${command} exited with ${status}: ${errors}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${expected_file} ${ACTUAL}
                RESULT_VARIABLE differs)
if(differs)
  # The diff goes straight to the test's output, unwrapped, lines as they are.
  message("${command} differs from ${expected_file} (- stored, + now):")
  execute_process(COMMAND diff -u ${expected_file} ${ACTUAL})
  message(FATAL_ERROR "${command}: output differs from ${expected_file}; if the new output is "
                      "right, copy ${ACTUAL} over it.")
endif()
