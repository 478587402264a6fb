# Bad input never crashes, hangs or lies (issue 17): every class of case is a test that expects a clear error
# (exit status 2, the message naming the file, field or option and what is accepted), or — where the input is legal
# — a result within a time limit.  The large and deep files come from bad_input/make_inputs.py at test time.
# Included from tests/CMakeLists.txt.
set(bad_dir ${CMAKE_CURRENT_BINARY_DIR}/bad_input)
add_test(NAME bad_input.make_inputs COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/bad_input/make_inputs.py ${bad_dir})
set_tests_properties(bad_input.make_inputs PROPERTIES FIXTURES_SETUP bad_input_files)

# bad_input_case(NAME "expected stderr regex" ARGS...): `roofplan ARGS` exits 2 with that error.
function(bad_input_case name expected)
    list(JOIN ARGN "|" args)
    add_test(NAME bad_input.${name} COMMAND ${CMAKE_COMMAND} -DCMD=$<TARGET_FILE:roofplan-cli> "-DARGS=${args}"
             "-DEXPECT=${expected}" -P ${CMAKE_CURRENT_SOURCE_DIR}/check_error.cmake)
    set_tests_properties(bad_input.${name} PROPERTIES FIXTURES_REQUIRED bad_input_files TIMEOUT 30)
endfunction()

# --- nesting ~100k levels deep (was: a segfault) -----------------------------------------------------------------
set(deep "nested deeper than 64 levels")
bad_input_case(depth.model "deep.json: ${deep}" inspect --model-file ${bad_dir}/deep.json)
bad_input_case(depth.model_field "deep_in_model.json: ${deep}" inspect --model-file ${bad_dir}/deep_in_model.json)
bad_input_case(depth.device "deep_in_device.json: ${deep}" devices --device-file ${bad_dir}/deep_in_device.json)
bad_input_case(depth.system "deep_in_system.json: ${deep}" systems --system-file ${bad_dir}/deep_in_system.json)
bad_input_case(depth.profile "deep_in_profile.json: ${deep}" predict -m alexnet -d h100 --profile ${bad_dir}/deep_in_profile.json)

# --- file size: /dev/zero is cut off at the limit -----------------------------------------------------------------
bad_input_case(size.dev_zero "/dev/zero: larger than 64 MiB" devices --device-file /dev/zero)

# --- device figures out of their physical range (was: NaN, inf, negative capacity, "internal error") ---------------
set(dev predict -m resnet50 -d my-gpu --device-file)
bad_input_case(range.peak_tiny "device_peak_tiny.json: .devices.0. 'my-gpu': peak.fp32 must be a positive number in .1e-4, 1e5. TFLOPS" ${dev} ${bad_dir}/device_peak_tiny.json)
bad_input_case(range.bandwidth_tiny "bandwidth_gb_s must be a positive number in .0.01, 1e6. GB/s" ${dev} ${bad_dir}/device_bandwidth_tiny.json)
bad_input_case(range.memory_huge "memory_gib must be a positive number in .0.01, 1e5. GiB" ${dev} ${bad_dir}/device_memory_huge.json)
bad_input_case(range.number_1e400 "device_1e400.json: a number out of range .*numbers must fit a double" ${dev} ${bad_dir}/device_1e400.json)
bad_input_case(range.compute_capability "devices.0..compute_capability: expected \"major.minor\" .*got '9.x'" ${dev} ${bad_dir}/device_cc_text.json)
bad_input_case(range.model_params "model_huge_embedding.json: 4611686018427387904 trainable parameters, more than 2.40"
               predict --model-file ${bad_dir}/model_huge_embedding.json -d h100)

# --- strict schemas: unknown fields, duplicate ids, wrong document kinds ---------------------------------------------
bad_input_case(schema.device_field "devices.0..memory_gb: unknown field; did you mean 'memory_gib'. Accepted: id name" ${dev} ${bad_dir}/device_unknown_field.json)
bad_input_case(schema.device_top "device_unknown_top.json: .extra: unknown field. Accepted: schema" ${dev} ${bad_dir}/device_unknown_top.json)
bad_input_case(schema.system_field "systems.0..nvlink_gb_s_per_lnk: unknown field; did you mean 'nvlink_gb_s_per_link'"
               systems --system-file ${bad_dir}/system_unknown_field.json)
bad_input_case(schema.profile_field "profile_unknown_field.json: .gem: unknown field; did you mean 'gemm'"
               predict -m alexnet -d h100 --profile ${bad_dir}/profile_unknown_field.json)
bad_input_case(range.profile_sm_side "profile_sm_side.json: kernel_class.layer_norm.sm_elements_per_cycle must be 0 \\(no SM-side term\\) or in \\[0.01, 1e4\\]"
               predict -m alexnet -d h100 --profile ${bad_dir}/profile_sm_side.json)
bad_input_case(schema.profile_class_field "profile_class_field.json: .kernel_class.layer_norm.sm_elements: unknown field; did you mean 'sm_elements_per_cycle'"
               predict -m alexnet -d h100 --profile ${bad_dir}/profile_class_field.json)
bad_input_case(schema.profile_sm_bytes "profile_sm_bytes.json: .kernel_class.layer_norm.sm_bytes_per_cycle: the SM-side term now goes by the element \\(sm_elements_per_cycle\\); refit this profile with `roofplan calibrate`"
               predict -m alexnet -d h100 --profile ${bad_dir}/profile_sm_bytes.json)
bad_input_case(schema.profile_old_classes "profile_old_classes.json: .kernel_class.normalization: a fit from before layer norm, the native batch norm's backward and cuDNN's NCHW batch norm got classes of their own"
               predict -m alexnet -d h100 --profile ${bad_dir}/profile_old_classes.json)
bad_input_case(schema.profile_array "profile_array.json: expected a profile object"
               predict -m alexnet -d h100 --profile ${bad_dir}/profile_array.json)
bad_input_case(schema.profile_array_collective "profile_array.json: expected a profile object"
               collective --system dgx2 --bytes 1MB --profile ${bad_dir}/profile_array.json)
bad_input_case(schema.device_duplicate "devices.1.: device id 'my-gpu' is given twice .first at .*devices.0.." ${dev} ${bad_dir}/device_duplicate.json)
bad_input_case(schema.system_duplicate "systems.1.: system id 'my-system' is given twice"
               systems --system-file ${bad_dir}/system_duplicate.json)
bad_input_case(schema.device_control_chars "devices.0..name: contains a control character .code 27." ${dev} ${bad_dir}/device_control_name.json)
bad_input_case(schema.model_control_chars "layers.0..name: contains a control character .code 27."
               inspect --model-file ${bad_dir}/model_control_name.json)

# --- long legal inputs read in linear time (were: 44 s for 99,999 layers, 28 s for 40,000 devices) ------------------
add_test(NAME bad_input.time.model_99999_layers COMMAND roofplan-cli inspect --model-file ${bad_dir}/model_99999_layers.json)
add_test(NAME bad_input.time.devices_40000 COMMAND roofplan-cli predict -m alexnet -d gpu-39999 --device-file ${bad_dir}/devices_40000.json)
set_tests_properties(bad_input.time.model_99999_layers bad_input.time.devices_40000 PROPERTIES
                     FIXTURES_REQUIRED bad_input_files TIMEOUT 15 PASS_REGULAR_EXPRESSION "fc99998|gpu-39999")
if(TARGET roofplan::onnx AND ROOFPLAN_ORACLE_TESTS)
    add_test(NAME bad_input.make_onnx_chain COMMAND ${ROOFPLAN_ONNX_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/bad_input/make_onnx_chain.py
             ${bad_dir}/chain.onnx 100000)
    set_tests_properties(bad_input.make_onnx_chain PROPERTIES FIXTURES_SETUP bad_input_onnx FIXTURES_REQUIRED bad_input_files)
    add_test(NAME bad_input.time.onnx_chain_100000 COMMAND roofplan-cli inspect --model-file ${bad_dir}/chain.onnx)
    set_tests_properties(bad_input.time.onnx_chain_100000 PROPERTIES FIXTURES_REQUIRED bad_input_onnx TIMEOUT 15
                         PASS_REGULAR_EXPRESSION "relu99999")
endif()
if(TARGET roofplan::onnx)  # found by the long fuzzing run: crashed inside ONNX 1.12's shape inference
    bad_input_case(onnx.node_arity "regression-conv-arity.onnx: node ./rnn/LSTM. .Conv. has 7 inputs and 3 outputs. its ONNX schema accepts 2 to 3 inputs"
                   inspect --model-file ${PROJECT_SOURCE_DIR}/tests/fuzz/corpus/onnx/regression-conv-arity.onnx)
    # Found by the 2026-11-24 run: an integer tensor of many small dimensions overflowed its element count (UBSan);
    # the file is legal, and its one linear layer is counted.
    add_test(NAME bad_input.onnx.int_tensor_dims
             COMMAND roofplan-cli inspect --model-file ${PROJECT_SOURCE_DIR}/tests/fuzz/corpus/onnx/regression-int-tensor-dims.onnx)
    set_tests_properties(bad_input.onnx.int_tensor_dims PROPERTIES TIMEOUT 15 PASS_REGULAR_EXPRESSION "total +64 +64 +128")
endif()

# Found by the 2026-11-24 cli fuzzing run (call 5, UBSan): explain's FLOPs line doubled a layer's MACs unchecked
# before the checked total; now the checked total's error comes first.
bad_input_case(explain.flops_overflow "overflows 64 bits \\(2 x 5634656568806104224\\)"
               explain -l "conv2d cin=229 cout=66 k=21 h=95999916 w=8826" -d h100)

# --- options: zero, negative, non-finite, out of range, not applicable, conflicting: errors, never defaults ---------
set(p predict -m resnet50 -d h100)
bad_input_case(option.cuda_graphs_eager "--cuda-graphs applies to --runtime compiled only .this run's runtime is eager." ${p} --cuda-graphs off)
bad_input_case(option.cuda_graphs_value "--cuda-graphs: expected on or off, got 'maybe'" ${p} --runtime compiled --cuda-graphs maybe)
bad_input_case(option.host_speed_ideal "--host-speed applies to the eager and compiled runtimes .this run's runtime is ideal: no host." ${p} --runtime ideal --host-speed 2)
bad_input_case(option.host_speed_nan "--host-speed: must be a number in .0.25, 8., got 'nan'" ${p} --host-speed nan)
bad_input_case(option.host_speed_range "--host-speed: must be a number in .0.25, 8., got '0'" ${p} --host-speed 0)
bad_input_case(option.seq_zero "--seq: must be an integer in .1, 16777216., got '0'" ${p} --seq 0)
bad_input_case(option.image_size_zero "--image-size: must be an integer in .1, 65536., got '0'" ${p} --image-size 0)
bad_input_case(option.gpus_zero "--gpus: must be an integer in .1, 1000000., got '0'" ${p} --system dgx2 --gpus 0)
bad_input_case(option.gpus_huge "--gpus: must be an integer in .1, 1000000., got '2147483647'" ${p} --system dgx2 --gpus 2147483647)
bad_input_case(option.nodes_zero "--nodes: must be an integer in .1, 100000., got '0'" ${p} --system dgx2 --nodes 0)
bad_input_case(option.dataset_inf "--dataset: must be a number in .0, 1e.15., got 'inf'" ${p} --system dgx2 --dataset inf --epochs 1)
bad_input_case(option.price_inf "--price: must be a number in .0, 1e.09., got 'inf'" ${p} --system dgx2 --dataset 100 --epochs 1 --price inf)
bad_input_case(option.price_negative "--price: must be a number in .0, 1e.09., got '-1'" ${p} --system dgx2 --dataset 100 --epochs 1 --price -1)
foreach(opt gpus nodes dataset epochs price)
    bad_input_case(option.${opt}_without_system "--${opt} requires --system" ${p} --${opt} 2)
endforeach()
bad_input_case(option.price_without_dataset "--price requires --dataset" ${p} --system dgx2 --price 2)
bad_input_case(option.device_and_system "--device h100 and --system dgx2 .whose GPU is v100-sxm2-32gb. disagree" ${p} --system dgx2)
bad_input_case(option.precision_unknown "--precision: unknown precision 'fp8'; accepted: fp32" ${p} -p fp8)
bad_input_case(option.global_batch_zero "--global-batch: must be an integer in .1, 1099511627776., got '0'"
               plan -m resnet50 --global-batch 0)
bad_input_case(option.global_batch_2_64 "--global-batch: must be an integer in .1, 1099511627776., got '18446744073709551616'"
               plan -m resnet50 --global-batch 18446744073709551616)
bad_input_case(option.compare_fsdp "--data-parallel: unknown data-parallel mode 'fsdp'; accepted: ddp"
               compare -m resnet50 --systems dgx2,dgx1v --data-parallel fsdp)
bad_input_case(option.dp_compiled "nn.DataParallel runs its replicas eagerly: a torch.compile'd module inside it runs at eager speed"
               predict -m resnet50 --system dgx2 --gpus 2 --data-parallel dp --runtime compiled)
bad_input_case(option.engine_training "--engine applies to --runtime compiled with --mode infer only .this run: runtime compiled, mode train."
               predict -m resnet50 -d h100 --runtime compiled --engine on)
bad_input_case(option.engine_int8_off "--engine off: an int8 inference runs only as an inference engine"
               predict -m resnet50 -d h100 -p int8 --mode infer --engine off)
bad_input_case(option.compare_int8 "--precision: int8 is for inference only; this command predicts training"
               compare -m resnet50 --systems dgx2,dgx1v --precision int8)
bad_input_case(option.scaling_gpus_list "--gpus: '0' is not a positive integer" scaling -m resnet50 --system dgx2 --gpus 1,0)
foreach(value 0 -1 inf)
    bad_input_case(option.validate_max_median_error_${value} "--max-median-error: must be a number in .0, 100., got '${value}'"
                   validate --recorded ${PROJECT_SOURCE_DIR}/validation/results --max-median-error ${value})
endforeach()
bad_input_case(option.collective_gpus_zero "--gpus: must be an integer in .1, 1000000., got '0'" collective --system dgx2 --gpus 0 --bytes 1MB)
