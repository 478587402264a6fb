# roofplan::onnx — the ONNX importer (include/roofplan/io/onnx.hpp) with what it links: Debian's libonnx-dev
# (onnx, onnx_proto) and protobuf.  Optional: without ONNX the rest of roofplan builds unchanged and the CLI
# reads only roofplan-model/1 JSON model files.
option(ROOFPLAN_WITH_ONNX "Build ONNX model import when libonnx-dev is found" ON)
if(ROOFPLAN_WITH_ONNX)
    find_package(ONNX CONFIG QUIET)
    find_package(Protobuf QUIET)
endif()
if(ROOFPLAN_WITH_ONNX AND ONNX_FOUND AND Protobuf_FOUND AND TARGET onnx AND TARGET protobuf::libprotobuf)
    add_library(roofplan_onnx INTERFACE)
    add_library(roofplan::onnx ALIAS roofplan_onnx)
    target_sources(roofplan_onnx INTERFACE FILE_SET HEADERS BASE_DIRS include
                   FILES "${PROJECT_SOURCE_DIR}/include/roofplan/io/onnx.hpp")
    target_link_libraries(roofplan_onnx INTERFACE roofplan onnx onnx_proto protobuf::libprotobuf)
    target_compile_definitions(roofplan_onnx INTERFACE ROOFPLAN_HAS_ONNX=1)
    set_target_properties(roofplan_onnx PROPERTIES VERIFY_INTERFACE_HEADER_SETS ON)
    message(STATUS "roofplan: ONNX ${ONNX_VERSION} found; ONNX model import is on (roofplan::onnx)")
else()
    message(STATUS "roofplan: ONNX (Debian libonnx-dev) not found; ONNX model import is off")
endif()
if(ROOFPLAN_INSTALL)
    install(FILES include/roofplan/io/onnx.hpp DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/roofplan/io")
endif()

# libFuzzer targets for the JSON and ONNX model readers (clang; a separate build, see scripts/test.sh).
option(ROOFPLAN_FUZZ "Build the libFuzzer targets of the model-file readers (clang)" OFF)
if(ROOFPLAN_FUZZ)
    add_subdirectory(tests/fuzz)
endif()
