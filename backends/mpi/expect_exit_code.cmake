# Runs a command and checks its exit code and that its output (stdout and stderr) matches a
# regular expression; for the CTests of errors that must end a run with a given code.
#   cmake "-DCOMMAND=program arg ..." -DEXPECTED_EXIT_CODE=2 "-DEXPECTED_OUTPUT=regex"
#         -P expect_exit_code.cmake
separate_arguments(command_line UNIX_COMMAND "${COMMAND}")
execute_process(COMMAND ${command_line} RESULT_VARIABLE exit_code OUTPUT_VARIABLE output
                ERROR_VARIABLE output)
message("${output}")
if(NOT exit_code EQUAL EXPECTED_EXIT_CODE)
  message(FATAL_ERROR "exit code ${exit_code}, expected ${EXPECTED_EXIT_CODE}")
endif()
if(NOT output MATCHES "${EXPECTED_OUTPUT}")
  message(FATAL_ERROR "output does not match '${EXPECTED_OUTPUT}'")
endif()
