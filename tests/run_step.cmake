# run_step(WHAT COMMAND...): runs a command of a CMake-script test, prints its output, and stops
# the script naming WHAT when it fails.
function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE output
                  ERROR_VARIABLE output)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${what} failed (${result}):\n${output}")
  endif()
  message("${output}")
endfunction()
