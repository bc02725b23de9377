# Runs COMMAND (arguments separated by |) and passes when it exits non-zero within TIMEOUT seconds and its
# output matches EXPECT (a regular expression): for programs that must fail cleanly, e.g. one MPI rank throwing.
#   cmake -DCOMMAND=... -DEXPECT=... -DTIMEOUT=60 -P expect_failure.cmake
string(REPLACE "|" ";" COMMAND "${COMMAND}")
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT ${TIMEOUT})
message("${out}${err}")
if(rc MATCHES "timeout|Process terminated due to timeout")
  message(FATAL_ERROR "expect_failure: still running after ${TIMEOUT} s (hang): ${rc}")
endif()
if(rc STREQUAL "0")
  message(FATAL_ERROR "expect_failure: exited with 0, expected a non-zero exit code")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "expect_failure: the output does not contain '${EXPECT}'")
endif()
message("expect_failure: exit status ${rc}, message found")
