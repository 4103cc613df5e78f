# Runs two commands and checks that both exit 0 with the same standard output, byte for byte;
# for `spmdsim plan` under mpirun against one process.
#   cmake "-DCOMMAND=program arg ..." "-DREFERENCE=program arg ..." -P expect_same_output.cmake
separate_arguments(command_line UNIX_COMMAND "${COMMAND}")
separate_arguments(reference_line UNIX_COMMAND "${REFERENCE}")
execute_process(COMMAND ${reference_line} RESULT_VARIABLE reference_exit
                OUTPUT_VARIABLE reference_output ERROR_VARIABLE reference_errors)
execute_process(COMMAND ${command_line} RESULT_VARIABLE exit_code OUTPUT_VARIABLE output
                ERROR_VARIABLE errors)
if(NOT reference_exit EQUAL 0)
  message(FATAL_ERROR "${REFERENCE}: exit code ${reference_exit}: ${reference_errors}")
endif()
if(NOT exit_code EQUAL 0)
  message(FATAL_ERROR "${COMMAND}: exit code ${exit_code}: ${errors}")
endif()
if(reference_output STREQUAL "")
  message(FATAL_ERROR "${REFERENCE}: printed nothing")
endif()
if(NOT output STREQUAL reference_output)
  message(FATAL_ERROR "${COMMAND} printed\n${output}\nwhere ${REFERENCE} printed\n${reference_output}")
endif()
message("the same ${reference_output}")
