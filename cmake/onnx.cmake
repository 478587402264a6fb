# roofplan::onnx — the ONNX importer: include/roofplan/io/onnx.hpp (the API) and src/onnx.cpp (the parsing, ONNX's
# shape inference, the operator mapping), compiled against Debian's libonnx-dev (onnx, onnx_proto) and protobuf,
# installed and exported with the package.  ROOFPLAN_WITH_ONNX is AUTO (build it when both packages are found; without
# them the rest of roofplan builds unchanged and the CLI reads only roofplan-model/1 JSON files), ON (required: a
# missing package fails the configure step; scripts/setup.sh and so CI use this, so that a machine without the
# packages cannot silently skip the ONNX tests) or OFF.
set(ROOFPLAN_WITH_ONNX AUTO CACHE STRING "ONNX model import: AUTO (when libonnx-dev and libprotobuf-dev are found), ON (required) or OFF")
set_property(CACHE ROOFPLAN_WITH_ONNX PROPERTY STRINGS AUTO ON OFF)
if(NOT ROOFPLAN_WITH_ONNX MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "ROOFPLAN_WITH_ONNX is '${ROOFPLAN_WITH_ONNX}'; accepted: AUTO, ON, OFF")
endif()
if(NOT ROOFPLAN_WITH_ONNX STREQUAL "OFF")
    find_package(ONNX CONFIG QUIET)
    find_package(Protobuf QUIET)
endif()
set(_roofplan_onnx_usable OFF)
if(ONNX_FOUND AND Protobuf_FOUND AND TARGET onnx AND TARGET protobuf::libprotobuf)
    set(_roofplan_onnx_usable ON)
endif()
if(ROOFPLAN_WITH_ONNX STREQUAL "ON" AND NOT _roofplan_onnx_usable)
    message(FATAL_ERROR "roofplan: ROOFPLAN_WITH_ONNX=ON but ONNX import cannot be built: ONNX config found: "
                        "${ONNX_FOUND}, protobuf found: ${Protobuf_FOUND}. Install the Debian packages libonnx-dev and "
                        "libprotobuf-dev (scripts/setup.sh does), or configure with -DROOFPLAN_WITH_ONNX=AUTO or OFF.")
endif()
if(NOT ROOFPLAN_WITH_ONNX STREQUAL "OFF" AND _roofplan_onnx_usable)
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
