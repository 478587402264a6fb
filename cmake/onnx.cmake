# roofplan::onnx — the ONNX importer: include/roofplan/io/onnx.hpp (the API) and src/onnx.cpp (the parsing, ONNX's
# shape inference, the operator mapping), compiled against Debian's libonnx-dev (onnx, onnx_proto) and protobuf,
# installed and exported with the package.  Optional: without ONNX the rest of roofplan builds unchanged and the
# CLI reads only roofplan-model/1 JSON model files.
option(ROOFPLAN_WITH_ONNX "Build ONNX model import when libonnx-dev is found" ON)
if(ROOFPLAN_WITH_ONNX)
    find_package(ONNX CONFIG QUIET)
    find_package(Protobuf QUIET)
endif()
if(ROOFPLAN_WITH_ONNX AND ONNX_FOUND AND Protobuf_FOUND AND TARGET onnx AND TARGET protobuf::libprotobuf)
    add_library(roofplan_onnx src/onnx.cpp)
    add_library(roofplan::onnx ALIAS roofplan_onnx)
    target_sources(roofplan_onnx PUBLIC FILE_SET HEADERS BASE_DIRS include
                   FILES "${PROJECT_SOURCE_DIR}/include/roofplan/io/onnx.hpp")
    target_link_libraries(roofplan_onnx PUBLIC roofplan_core
                                        PRIVATE onnx onnx_proto protobuf::libprotobuf $<BUILD_INTERFACE:roofplan_warnings>)
    target_compile_definitions(roofplan_onnx PUBLIC ROOFPLAN_HAS_ONNX=1)
    set_target_properties(roofplan_onnx PROPERTIES EXPORT_NAME onnx POSITION_INDEPENDENT_CODE ON
                                                   VERIFY_INTERFACE_HEADER_SETS ON)
    list(APPEND ROOFPLAN_COMPONENTS onnx)
    message(STATUS "roofplan: ONNX ${ONNX_VERSION} found; ONNX model import is on (roofplan::onnx)")
else()
    message(STATUS "roofplan: ONNX (Debian libonnx-dev) not found; ONNX model import is off")
endif()

# libFuzzer targets for the JSON and ONNX model readers (clang; a separate build, see scripts/test.sh).
option(ROOFPLAN_FUZZ "Build the libFuzzer targets of the model-file readers (clang)" OFF)
if(ROOFPLAN_FUZZ)
    add_subdirectory(tests/fuzz)
endif()
