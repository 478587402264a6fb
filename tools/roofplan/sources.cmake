# The roofplan CLI's sources but main.cpp: the program (tools/CMakeLists.txt) and the fuzz target of its command line
# (tests/fuzz/CMakeLists.txt) both compile them.
set(ROOFPLAN_CLI_SOURCES)
foreach(source run models inspect devices predict systems collective roofline compare scaling calibrate validate
               explain plan)
    list(APPEND ROOFPLAN_CLI_SOURCES "${CMAKE_CURRENT_LIST_DIR}/${source}.cpp")
endforeach()
