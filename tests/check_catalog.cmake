# Regenerates the constexpr device table from data/devices.json and compares it with the committed header.
execute_process(COMMAND ${PYTHON} ${SOURCE}/scripts/gen_device_catalog.py ${SOURCE}/data/devices.json ${OUT}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "scripts/gen_device_catalog.py failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT} ${SOURCE}/include/roofplan/device/catalog_data.hpp
                RESULT_VARIABLE same)
if(NOT same EQUAL 0)
    message(FATAL_ERROR "include/roofplan/device/catalog_data.hpp is stale: run scripts/gen_device_catalog.py")
endif()
