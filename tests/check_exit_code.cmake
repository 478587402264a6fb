# A command-line error (an unknown option) exits with status 2, the status of every bad-input error.
execute_process(COMMAND "${CMD}" predict --no-such-option RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
    message(FATAL_ERROR "expected exit status 2 for an unknown option, got ${rc}: ${err}")
endif()
if(NOT err MATCHES "--no-such-option")
    message(FATAL_ERROR "the error does not name the option: ${err}")
endif()
