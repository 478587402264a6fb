# Runs CMD with ARGS (a list, '|'-separated) and checks its exit status (RC, default 2: bad input) and that its
# stderr matches EXPECT (a regex).  Bad input must fail cleanly: a clear error, the status of its kind, no crash.
#   cmake -DCMD=roofplan -DARGS="predict|-m|resnet50" -DEXPECT="--seq: must" [-DRC=2] -P check_error.cmake
string(REPLACE "|" ";" args "${ARGS}")
if(NOT DEFINED RC)
    set(RC 2)
endif()
execute_process(COMMAND "${CMD}" ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc STREQUAL "${RC}")
    message(FATAL_ERROR "expected exit status ${RC}, got ${rc}\nstderr: ${err}\nstdout: ${out}")
endif()
if(NOT err MATCHES "${EXPECT}")
    message(FATAL_ERROR "stderr does not match '${EXPECT}':\n${err}")
endif()
string(LENGTH "${out}" printed)
if(NOT RC STREQUAL "0" AND printed GREATER 0)
    message(FATAL_ERROR "a failed command printed a report besides its error:\n${out}")
endif()
message(STATUS "ok: ${err}")
