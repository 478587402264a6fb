# Model files (--model-file): the roofplan-model/1 JSON reader, the ONNX importer against torchvision and
# torch's own counts, malformed inputs.  Included from tests/CMakeLists.txt.
add_executable(roofplan-model-file-tests unit/test_model_files.cpp unit/test_conv_transpose.cpp)
target_link_libraries(roofplan-model-file-tests PRIVATE roofplan_doctest_main roofplan::roofplan roofplan_warnings)
if(TARGET roofplan::onnx)  # the tests build graphs with ONNX's own protobuf types
    target_link_libraries(roofplan-model-file-tests PRIVATE roofplan::onnx onnx onnx_proto protobuf::libprotobuf)
endif()
target_compile_definitions(roofplan-model-file-tests PRIVATE ROOFPLAN_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
add_test(NAME model_files.unit COMMAND roofplan-model-file-tests)

set(ROOFPLAN_TINY_CNN ${PROJECT_SOURCE_DIR}/examples/models/tiny_cnn.json)
add_test(NAME cli.model_file_json COMMAND roofplan-cli inspect --model-file ${ROOFPLAN_TINY_CNN})
set_tests_properties(cli.model_file_json PROPERTIES PASS_REGULAR_EXPRESSION "tiny-cnn: .*conv1 +conv2d +32x32x32 +864.*total +1,070,826")
add_test(NAME cli.model_file_json_predict COMMAND roofplan-cli predict --model-file ${ROOFPLAN_TINY_CNN} -d a100 -b 256 --json)
set_tests_properties(cli.model_file_json_predict PROPERTIES PASS_REGULAR_EXPRESSION "\"model\": \"tiny-cnn\".*\"throughput_samples_per_s\"")
add_test(NAME cli.model_file_json_scaling COMMAND roofplan-cli scaling --model-file ${ROOFPLAN_TINY_CNN} --system dgx2 --gpus 1,2 --json)
set_tests_properties(cli.model_file_json_scaling PROPERTIES PASS_REGULAR_EXPRESSION "\"model\": \"tiny-cnn\".*\"gpus\": 2")
add_test(NAME cli.model_file_and_model COMMAND roofplan-cli inspect -m resnet50 --model-file ${ROOFPLAN_TINY_CNN})
set_tests_properties(cli.model_file_and_model PROPERTIES PASS_REGULAR_EXPRESSION "excludes")
add_test(NAME cli.model_missing COMMAND roofplan-cli inspect)
set_tests_properties(cli.model_missing PROPERTIES PASS_REGULAR_EXPRESSION "give a model: --model ID .* or --model-file")
add_test(NAME cli.model_file_unknown_type COMMAND roofplan-cli inspect --model-file ${PROJECT_SOURCE_DIR}/README.md)
set_tests_properties(cli.model_file_unknown_type PROPERTIES PASS_REGULAR_EXPRESSION "unknown file type; accepted: .onnx")
add_test(NAME cli.model_file_json_seq COMMAND roofplan-cli inspect --model-file ${ROOFPLAN_TINY_CNN} --seq 12)
set_tests_properties(cli.model_file_json_seq PROPERTIES PASS_REGULAR_EXPRESSION "shapes of .* are fixed by the file")
add_test(NAME cli.model_file_json_bad COMMAND roofplan-cli inspect --model-file ${PROJECT_SOURCE_DIR}/data/devices.json)
set_tests_properties(cli.model_file_json_bad PROPERTIES PASS_REGULAR_EXPRESSION "devices.json: schema: expected \"roofplan-model/1\"")

# ONNX: files exported by PyTorch at test time (Debian python3-torch, python3-torchvision, python3-onnx).
set(ROOFPLAN_ONNX_PYTHON /usr/bin/python3 CACHE FILEPATH "Python with torch, torchvision and onnx (ONNX import tests)")
if(TARGET roofplan::onnx AND ROOFPLAN_ORACLE_TESTS)
    set(onnx_dir ${CMAKE_CURRENT_BINARY_DIR}/onnx)
    add_test(NAME onnx.export COMMAND ${ROOFPLAN_ONNX_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/onnx/export_models.py ${onnx_dir})
    set_tests_properties(onnx.export PROPERTIES FIXTURES_SETUP onnx_files TIMEOUT 600 LABELS oracle)
    add_test(NAME onnx.against_zoo_and_torch COMMAND ${ROOFPLAN_ONNX_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/onnx/check_import.py
             --roofplan $<TARGET_FILE:roofplan-cli> --dir ${onnx_dir})
    set_tests_properties(onnx.against_zoo_and_torch PROPERTIES FIXTURES_REQUIRED onnx_files LABELS oracle
                         PASS_REGULAR_EXPRESSION "all passed" FAIL_REGULAR_EXPRESSION "FAIL ")
    # One error-path test per malformed file.
    function(roofplan_onnx_error file expected)
        add_test(NAME onnx.error_${file} COMMAND roofplan-cli inspect --model-file ${onnx_dir}/${file}.onnx)
        set_tests_properties(onnx.error_${file} PROPERTIES FIXTURES_REQUIRED onnx_files
                             PASS_REGULAR_EXPRESSION "roofplan: error: [^\n]*${file}.onnx: ${expected}")
    endfunction()
    roofplan_onnx_error(truncated "not a valid ONNX model [(]protobuf parse failed")
    roofplan_onnx_error(wrong_magic "not a valid ONNX model")
    roofplan_onnx_error(cycle "the graph has a cycle. nodes on or behind it: 'first' [(]Add[)]")
    roofplan_onnx_error(no_shape "input 'x' has no shape")
    roofplan_onnx_error(absurd "input 'x' dimension 1 is 1000000000000, absurdly large")
    add_test(NAME onnx.error_exit_code COMMAND roofplan-cli inspect --model-file ${onnx_dir}/truncated.onnx)
    set_tests_properties(onnx.error_exit_code PROPERTIES FIXTURES_REQUIRED onnx_files WILL_FAIL TRUE)
    add_test(NAME onnx.unsupported_reported COMMAND roofplan-cli inspect --model-file ${onnx_dir}/unsupported.onnx --json)
    set_tests_properties(onnx.unsupported_reported PROPERTIES FIXTURES_REQUIRED onnx_files PASS_REGULAR_EXPRESSION
        "2x HardSwish not counted .*first: '/act/HardSwish'.*\"count\": 2.*\"op_type\": \"HardSwish\"")
    add_test(NAME onnx.unsupported_strict COMMAND roofplan-cli inspect --model-file ${onnx_dir}/unsupported.onnx --strict)
    set_tests_properties(onnx.unsupported_strict PROPERTIES FIXTURES_REQUIRED onnx_files
                         PASS_REGULAR_EXPRESSION "roofplan: error: .*node '/act/HardSwish' \\(HardSwish\\) is not supported")
    add_test(NAME onnx.seq_without_dynamic_axis COMMAND roofplan-cli inspect --model-file ${onnx_dir}/lstm.onnx --seq 5)
    set_tests_properties(onnx.seq_without_dynamic_axis PROPERTIES FIXTURES_REQUIRED onnx_files
                         PASS_REGULAR_EXPRESSION "has no dynamic sequence dimension")
    add_test(NAME onnx.dynamic_seq_needed COMMAND roofplan-cli inspect --model-file ${onnx_dir}/encoder.onnx)
    set_tests_properties(onnx.dynamic_seq_needed PROPERTIES FIXTURES_REQUIRED onnx_files
                         PASS_REGULAR_EXPRESSION "dimension 1 \\('sequence'\\) is dynamic: give its length with --seq N")
    add_test(NAME onnx.predict COMMAND roofplan-cli predict --model-file ${onnx_dir}/resnet50.onnx -d v100 -b 256 --json)
    set_tests_properties(onnx.predict PROPERTIES FIXTURES_REQUIRED onnx_files
                         PASS_REGULAR_EXPRESSION "\"model\": \"resnet50\".*\"throughput_samples_per_s\"")
    add_test(NAME onnx.compare COMMAND roofplan-cli compare --model-file ${onnx_dir}/resnet18.onnx --systems dgx2,exxact-ts4
             --gpus 1,8 --batch-per-system 256,64)
    set_tests_properties(onnx.compare PROPERTIES FIXTURES_REQUIRED onnx_files PASS_REGULAR_EXPRESSION "GPUs +dgx2 \\(b256\\)")
    add_test(NAME onnx.roofline COMMAND roofplan-cli roofline --model-file ${onnx_dir}/encoder.onnx --seq 128 -d h100
             -p amp-bf16 --json)
    set_tests_properties(onnx.roofline PROPERTIES FIXTURES_REQUIRED onnx_files PASS_REGULAR_EXPRESSION "\"points\".*\"roofs\"")
endif()
