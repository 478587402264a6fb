# Tests of `roofplan explain`, the layer-spec parser, --csv on every figure-printing command and the breakdown chart
# (included from tests/CMakeLists.txt).
target_sources(roofplan-unit-tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/unit/test_layer_spec.cpp)

# --- explain: formulas with the numbers substituted, checked against hand-computed values -------------------------
set(conv "conv2d cin=64 cout=64 k=3 s=1 p=1 h=56 w=56")
add_test(NAME cli.explain_conv COMMAND roofplan-cli explain --layer ${conv} -b 32)
set_tests_properties(cli.explain_conv PROPERTIES PASS_REGULAR_EXPRESSION
    "Ho += ⌊\\(H \\+ 2·p − d·\\(k − 1\\) − 1\\)/s⌋ \\+ 1 = ⌊\\(56 \\+ 2·1 − 1·\\(3 − 1\\) − 1\\)/1⌋ \\+ 1 = 56.*params += cout·\\(cin·k² \\+ 1\\) = 64·\\(64·3² \\+ 1\\) = 36,928.*MACs += Ho·Wo·cout·cin·k² = 56·56·64·64·3² = 115,605,504.*Γ += paper ops·B / params = 115,806,208·32 / 36,928 = B·Ho·Wo = 32·56·56 = 100,352.*FLOPs += 2·MACs \\+ vector FLOPs = 2·3699376128 \\+ 6422528 = 7,405,174,784 FLOP.*bytes += \\(weights \\+ inputs \\+ outputs\\)·4 = \\(36928 \\+ 6422528 \\+ 6422528\\)·4 = 51,527,936 B.*give --device")
# 4096x4096 linear, batch 1, bf16: FLOPs 2·4096² + 4096 = 33,558,528; bytes (4096·4097 + 4096 + 4096)·2 = 33,579,008;
# intensity 0.9994 against H100's ridge 989.4 TFLOP/s / 3.35 TB/s = 295 FLOP/B.
add_test(NAME cli.explain_verdict COMMAND roofplan-cli explain -l "linear in=4096 out=4096" -d h100 -p amp-bf16)
set_tests_properties(cli.explain_verdict PROPERTIES PASS_REGULAR_EXPRESSION
    "FLOPs += 2·MACs \\+ vector FLOPs = 2·16777216 \\+ 4096 = 33,558,528 FLOP.*= 33,579,008 B.*intensity 1.00 FLOP/B < ridge 295 FLOP/B of h100-sxm \\(989 TFLOP/s bf16_tensor / 3.35 TB/s\\) → memory-bound.*why: moving.*the engine predicts")
add_test(NAME cli.explain_compute_bound COMMAND roofplan-cli explain -l "linear in=4096 out=4096 rows=2048" -b 8 -d h200 -p amp-bf16)
set_tests_properties(cli.explain_compute_bound PROPERTIES PASS_REGULAR_EXPRESSION "→ compute-bound")
add_test(NAME cli.explain_json COMMAND roofplan-cli explain -l ${conv} -b 32 -d h200 --json)
set_tests_properties(cli.explain_json PROPERTIES PASS_REGULAR_EXPRESSION
    "\"formula\": \"cout·\\(cin·k² \\+ 1\\)\",[^}]*\"id\": \"params\",[^}]*\"substituted\": \"64·\\(64·3² \\+ 1\\)\",[^}]*\"value\": 36928.*\"bound\": \"compute\".*\"ridge_flops_per_byte\"")
add_test(NAME cli.explain_model_layer COMMAND roofplan-cli explain -m resnet50 -n layer1.0.conv2 -b 32 -d v100)
set_tests_properties(cli.explain_model_layer PROPERTIES PASS_REGULAR_EXPRESSION
    "explain: resnet50 layer1.0.conv2 \\(conv2d\\).*params += cout·cin·k² = 64·64·3² = 36,864")
add_test(NAME cli.explain_first_layer COMMAND roofplan-cli explain -m resnet50 -n conv1 --pass all)
set_tests_properties(cli.explain_first_layer PROPERTIES PASS_REGULAR_EXPRESSION "skipped +backward-data")
add_test(NAME cli.explain_causal COMMAND roofplan-cli explain -l "attention d=64 heads=4 seq=4 causal")
set_tests_properties(cli.explain_causal PROPERTIES PASS_REGULAR_EXPRESSION
    "pairs += L·\\(Lkv − L\\) \\+ L·\\(L \\+ 1\\)/2 = 4·\\(4 − 4\\) \\+ 4·\\(4 \\+ 1\\)/2 = 10")
add_test(NAME cli.explain_lstm COMMAND roofplan-cli explain -l "lstm in=1024 hidden=1024 seq=10" --pass backward)
set_tests_properties(cli.explain_lstm PROPERTIES PASS_REGULAR_EXPRESSION "= 8,396,800")
foreach(spec "maxpool2d c=64 h=112 w=112 k=3 s=2 p=1" "batchnorm2d c=64 h=56 w=56" "gelu shape=384x3072"
             "embedding vocab=30522 d=768 rows=128" "layernorm d=768 rows=384" "softmax shape=12x384x384")
    string(REGEX REPLACE " .*" "" kind "${spec}")
    add_test(NAME cli.explain_${kind} COMMAND roofplan-cli explain -l ${spec} -b 4 -d a100 --pass all)
    set_tests_properties(cli.explain_${kind} PROPERTIES PASS_REGULAR_EXPRESSION "intensity.*→ memory-bound")
endforeach()
# errors: what was wrong and what is accepted, exit status 2
add_test(NAME cli.explain_unknown_kind COMMAND roofplan-cli explain -l "conv3d cin=3")
set_tests_properties(cli.explain_unknown_kind PROPERTIES PASS_REGULAR_EXPRESSION
    "roofplan: error: unknown layer kind 'conv3d' \\(did you mean conv2d\\?\\); accepted: linear, conv2d, attention")
add_test(NAME cli.explain_exit_code COMMAND roofplan-cli explain -l "conv3d cin=3")
set_tests_properties(cli.explain_exit_code PROPERTIES WILL_FAIL TRUE)
add_test(NAME cli.explain_bad_key COMMAND roofplan-cli explain -l "conv2d cin=64 cout=64 kernal=3 h=56 w=56")
set_tests_properties(cli.explain_bad_key PROPERTIES PASS_REGULAR_EXPRESSION
    "conv2d: unknown key 'kernal' \\(did you mean kernel\\?\\); accepted: cin\\|in_channels")
add_test(NAME cli.explain_impossible COMMAND roofplan-cli explain -l "conv2d cin=1 cout=1 k=9 h=4 w=4")
set_tests_properties(cli.explain_impossible PROPERTIES PASS_REGULAR_EXPRESSION "larger than the padded input")
add_test(NAME cli.explain_both COMMAND roofplan-cli explain -l ${conv} -m resnet50 -n conv1)
set_tests_properties(cli.explain_both PROPERTIES PASS_REGULAR_EXPRESSION "not both")
add_test(NAME cli.explain_nothing COMMAND roofplan-cli explain)
set_tests_properties(cli.explain_nothing PROPERTIES PASS_REGULAR_EXPRESSION "give --layer")
add_test(NAME cli.explain_unknown_layer_name COMMAND roofplan-cli explain -m resnet50 -n layer1.0.conv5)
set_tests_properties(cli.explain_unknown_layer_name PROPERTIES PASS_REGULAR_EXPRESSION
    "model 'resnet50' has no layer 'layer1.0.conv5'; did you mean layer1.0.conv1")
add_test(NAME cli.explain_bad_pass COMMAND roofplan-cli explain -l ${conv} --pass sideways)
set_tests_properties(cli.explain_bad_pass PROPERTIES PASS_REGULAR_EXPRESSION "unknown pass 'sideways'; accepted: forward, backward, all")
add_test(NAME cli.explain_int8_training COMMAND roofplan-cli explain -l ${conv} -p int8 --pass all -d t4)
set_tests_properties(cli.explain_int8_training PROPERTIES PASS_REGULAR_EXPRESSION "inference only")

# --- --csv: parsed as a spreadsheet would (tests/check_csv.py), raw numbers ----------------------------------------
find_program(ROOFPLAN_CSV_PYTHON NAMES python3 HINTS /usr/bin)
if(ROOFPLAN_CSV_PYTHON)
    set(check ${ROOFPLAN_CSV_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/check_csv.py $<TARGET_FILE:roofplan-cli>)
    add_test(NAME csv.models COMMAND ${check} --numeric params,macs_per_sample,flops_per_sample --where id=resnet50
             --expect params=25557032 --expect macs_per_sample=4089184256 --min-rows 16 -- models --csv)
    add_test(NAME csv.inspect COMMAND ${check} --numeric params,macs_per_sample,bytes,arithmetic_intensity,gamma
             --where layer=layer1.0.conv2 --expect params=36864 --expect macs_per_sample=115605504
             --expect output_shape=64x56x56 -- inspect -m resnet50 -b 32 --csv)
    add_test(NAME csv.devices COMMAND ${check} --numeric sms,fp32_tflops,int8_tensor_tops,bandwidth_gb_s,memory_gib
             --where id=h200 --expect sms=132 --expect fp32_tflops=67 --min-rows 20 -- devices --csv)
    # layer1.0.conv2 at batch 256, training: 3 passes x 2 x 115,605,504 x 256 FLOP (no bias; the ideal runtime: the
    # eager one adds the split-K reduction of the filter gradient)
    add_test(NAME csv.predict COMMAND ${check} --numeric time_s,forward_s,backward_data_s,backward_weight_s,flops,bytes
             --where layer=layer1.0.conv2 --expect flops=177570054144 --min-rows 100
             -- predict -m resnet50 -d v100 -b 256 --runtime ideal --csv)
    add_test(NAME csv.predict_system COMMAND ${check} --numeric gpus,throughput_samples_per_s,comm_time_s
             --where system=dgx2 --expect gpus=16 --expect model=resnet50 -- predict -m resnet50 --system dgx2 --gpus 16 -b 256 --csv)
    add_test(NAME csv.roofline COMMAND ${check} --numeric arithmetic_intensity,flops_per_s,time_s --where name=fc
             --expect type=linear -- roofline -m resnet50 -d h100 -p amp-bf16 -b 128 --csv)
    add_test(NAME csv.systems COMMAND ${check} --numeric gpus_per_node,allreduce_ring_gb_s --where id=dgx1v
             --expect gpus_per_node=8 --expect allreduce_ring_gb_s=150 -- systems --csv)
    add_test(NAME csv.collective COMMAND ${check} --numeric bytes,time_s,algbw_GBps,busbw_GBps --where bytes=1073741824
             --min-rows 11 -- collective --op allreduce --system dgx1v --gpus 2 --sweep 1MiB:1GiB --csv)
    add_test(NAME csv.compare COMMAND ${check} --numeric gpus,throughput_samples_per_s,ratio_to_first --min-rows 6
             -- compare -m resnet50 --systems dgx2,exxact-ts4 --gpus 1,8,16 --batch-per-system 256,64 --csv)
    add_test(NAME csv.scaling COMMAND ${check} --numeric gpus,throughput_samples_per_s,scaling_efficiency
             --where gpus=1 --expect scaling_efficiency=1 --expect fits=true -- scaling -m alexnet --system aws-p3dn --gpus 1,8,16,32 -b 256 --csv)
    add_test(NAME csv.calibrate COMMAND ${check} --numeric samples,efficiency,median_rel_error --where fitted=memory
             --expect samples=3 -- calibrate ${PROJECT_SOURCE_DIR}/validation/results/2026-11-21-h200/gemm_h200.json
             ${PROJECT_SOURCE_DIR}/validation/results/2026-11-21-h200/bandwidth_h200.json --csv)
endif()
add_test(NAME cli.json_and_csv COMMAND roofplan-cli models --json --csv)
set_tests_properties(cli.json_and_csv PROPERTIES PASS_REGULAR_EXPRESSION "models: give --json or --csv, not both")

# --- the breakdown chart renders (rsvg-convert) and carries its labels -----------------------------------------------
if(ROOFPLAN_RSVG)
    add_test(NAME cli.breakdown_svg
             COMMAND ${CMAKE_COMMAND} -DROOFPLAN=$<TARGET_FILE:roofplan-cli> -DRSVG=${ROOFPLAN_RSVG}
                     -DOUT=${CMAKE_CURRENT_BINARY_DIR}/breakdown -P ${CMAKE_CURRENT_LIST_DIR}/render_breakdown.cmake)
endif()
