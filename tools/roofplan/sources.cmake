# The roofplan CLI's sources but main.cpp: the program (tools/CMakeLists.txt) and the fuzz target of its command line
# (tests/fuzz/CMakeLists.txt) both compile them, and the Python package links them.
set(ROOFPLAN_CLI_SOURCES)
foreach(source run models inspect devices predict systems collective roofline compare scaling calibrate validate
               explain plan)
    list(APPEND ROOFPLAN_CLI_SOURCES "${CMAKE_CURRENT_LIST_DIR}/${source}.cpp")
endforeach()

# One compiled copy of them for the program and the Python package's extension (python/CMakeLists.txt), built
# position-independent so that the extension can take them.  The fuzz target compiles its own (other flags).
function(roofplan_cli_objects)
    if(TARGET roofplan_cli_objects)
        return()
    endif()
    add_library(roofplan_cli_objects OBJECT ${ROOFPLAN_CLI_SOURCES})
    set_target_properties(roofplan_cli_objects PROPERTIES POSITION_INDEPENDENT_CODE ON)
    roofplan_unity_build(roofplan_cli_objects 7)  # 14 sources: two batches, one per core
    target_link_libraries(roofplan_cli_objects PUBLIC roofplan::roofplan CLI11::CLI11 nlohmann_json::nlohmann_json
                                               PRIVATE roofplan_warnings)
    if(TARGET roofplan::onnx)  # --model-file net.onnx
        target_link_libraries(roofplan_cli_objects PUBLIC roofplan::onnx)
    endif()
endfunction()
