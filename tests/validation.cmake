# tests/validation.cmake — the measurement runner and the validation tables (included by tests/CMakeLists.txt).
#
# 1. The host pipeline, the same path as on a GPU: roofplan-bench host (Eigen GEMM + STREAM on the CPU) →
#    roofplan calibrate → roofplan validate (predicted vs measured per case) and predict with the host device.
#    The CI machine is a noisy shared VM: these assert that the pipeline works and its figures are finite and
#    sane, not tight accuracy bars.
# 2. The recorded GPU runs (validation/results): every bar of the issue, or the achieved figure held as a
#    regression bound where the data misses the bar; docs/validation.md's generated block is up to date.
target_sources(roofplan-unit-tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_validation.cpp)
set(ROOFPLAN_HOST_DIR ${CMAKE_CURRENT_BINARY_DIR}/host-bench)
file(MAKE_DIRECTORY ${ROOFPLAN_HOST_DIR})
add_test(NAME bench.host_suite
         COMMAND roofplan-bench host --quick --repeats 3 --warmup-ms 5 -o ${ROOFPLAN_HOST_DIR}/host-suite.json
                 --device-out ${ROOFPLAN_HOST_DIR}/host-device.json)
set_tests_properties(bench.host_suite PROPERTIES FIXTURES_SETUP host_suite TIMEOUT 180
                     PASS_REGULAR_EXPRESSION "wrote .*host-suite.json \\(3 report\\(s\\), [0-9]+ case\\(s\\)\\)")
# An efficiency of 1.000 (clamped) is possible: without cpufreq the peak uses the base clock, and turbo beats it.
add_test(NAME bench.host_calibrate
         COMMAND roofplan-cli calibrate ${ROOFPLAN_HOST_DIR}/host-suite.json -o ${ROOFPLAN_HOST_DIR}/host-profile.json)
set_tests_properties(bench.host_calibrate PROPERTIES FIXTURES_REQUIRED host_suite FIXTURES_SETUP host_profile
                     PASS_REGULAR_EXPRESSION "profile for host-cpu .*fp32 +[1-9][0-9]* +[01]\\.[0-9]+ .*memory +3 +[01]\\.[0-9]+")
add_test(NAME bench.host_validate
         COMMAND roofplan-cli validate ${ROOFPLAN_HOST_DIR}/host-suite.json --profile ${ROOFPLAN_HOST_DIR}/host-profile.json
                 --max-median-error 1.0)
set_tests_properties(bench.host_validate PROPERTIES FIXTURES_REQUIRED "host_suite;host_profile"
                     PASS_REGULAR_EXPRESSION "fp32 +128x128x128 .*memory +triad .*calibrated profile: median \\|error\\| [0-9.]+%")
add_test(NAME bench.host_validate_json
         COMMAND roofplan-cli validate ${ROOFPLAN_HOST_DIR}/host-suite.json --profile ${ROOFPLAN_HOST_DIR}/host-profile.json --json)
set_tests_properties(bench.host_validate_json PROPERTIES FIXTURES_REQUIRED "host_suite;host_profile"
                     PASS_REGULAR_EXPRESSION "\"calibrated_error\".*\"device\": \"host-cpu\".*\"finite\": true")
add_test(NAME bench.host_predict
         COMMAND roofplan-cli predict -m resnet18 -d host-cpu --device-file ${ROOFPLAN_HOST_DIR}/host-device.json
                 --profile ${ROOFPLAN_HOST_DIR}/host-profile.json -b 8 --json)
set_tests_properties(bench.host_predict PROPERTIES FIXTURES_REQUIRED "host_suite;host_profile"
                     PASS_REGULAR_EXPRESSION "\"device\": \"host-cpu\".*\"throughput_samples_per_s\": [0-9]")
add_test(NAME bench.unknown_suite COMMAND roofplan-bench hots -o ${ROOFPLAN_HOST_DIR}/never.json)
set_tests_properties(bench.unknown_suite PROPERTIES PASS_REGULAR_EXPRESSION "unknown suite 'hots'; did you mean host\\?")
add_test(NAME bench.device_out_without_host COMMAND roofplan-bench nccl -o ${ROOFPLAN_HOST_DIR}/never.json
         --device-out ${ROOFPLAN_HOST_DIR}/never-device.json --kernels-dir ${ROOFPLAN_HOST_DIR})
set_tests_properties(bench.device_out_without_host PROPERTIES PASS_REGULAR_EXPRESSION "--device-out describes the host")
# A GPU suite on this GPU-less machine must say clearly why it cannot run: the kernel is not built (a build without
# CUDA), or it is and finds no GPU (exit status 77).  (kernels/ is configured after tests/, so which one cannot be
# known here.)
add_test(NAME bench.gpu_suite_without_gpu COMMAND roofplan-bench gpu-gemm -o ${ROOFPLAN_HOST_DIR}/never.json)
set_tests_properties(bench.gpu_suite_without_gpu PROPERTIES
                     PASS_REGULAR_EXPRESSION  # a list: either message passes
                     "error: roofplan-gemm not found \\(looked in .*\\). build the CUDA kernels;error: gpu-gemm: roofplan-gemm failed \\(exit status 77\\)")
add_test(NAME validate.not_a_report COMMAND roofplan-cli validate ${PROJECT_SOURCE_DIR}/data/devices.json --device h200)
set_tests_properties(validate.not_a_report PROPERTIES PASS_REGULAR_EXPRESSION "no verified GEMM, streaming or end-to-end cases")

add_test(NAME validate.recorded_bars
         COMMAND roofplan-cli validate --recorded ${PROJECT_SOURCE_DIR}/validation/results --check)
set_tests_properties(validate.recorded_bars PROPERTIES
                     PASS_REGULAR_EXPRESSION "h200.gemm.fp32.median +10% +[0-9.]+% +met.*e2e.bert-qa"
                     FAIL_REGULAR_EXPRESSION "BROKEN")
add_test(NAME validate.doc_current
         COMMAND roofplan-cli validate --recorded validation/results --check-doc docs/validation.md
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(validate.doc_current PROPERTIES PASS_REGULAR_EXPRESSION "generated block up to date")
