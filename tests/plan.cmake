# CLI tests of `roofplan plan` and of the progress display (included from tests/CMakeLists.txt).
set(ROOFPLAN_PLAN_RESNET -m resnet50 -b 256 --dataset 1281167 --epochs 90)

add_test(NAME cli.plan_table COMMAND roofplan-cli plan ${ROOFPLAN_PLAN_RESNET} --systems dgx2,dgx-h100 --max-gpus 16
         --price 3 --deadline 24)
set_tests_properties(cli.plan_table PROPERTIES PASS_REGULAR_EXPRESSION
    "10 options evaluated: [0-9]+ feasible, [0-9]+ infeasible; ranked by time-to-train.*feasible:.*1 +dgx-h100 x16 +h100-sxm +2 +256 .*infeasible:.*dgx2 x1 .*exceeds the deadline of 24 h")
add_test(NAME cli.plan_json COMMAND roofplan-cli plan ${ROOFPLAN_PLAN_RESNET} --systems dgx2 --max-gpus 16 --price dgx2=3
         --rank cost --json)
set_tests_properties(cli.plan_json PROPERTIES PASS_REGULAR_EXPRESSION
    "\"feasible\": \\[.*\"bound\": \"compute\".*\"cost\": [0-9.]+.*\"cost_per_hour\": 3.0.*\"energy_j\".*\"gpus\": 1,.*\"rank\": 1,.*\"step_share\": {.*\"communication\".*\"time_to_train_s\": [0-9.]+.*\"infeasible\": \\[\\].*\"rank\": \"cost\",.*\"rank_key\": \"cost\"")
# Precision support and memory capacity make options infeasible with a reason; the command still succeeds.
add_test(NAME cli.plan_unsupported_precision COMMAND roofplan-cli plan -m resnet50 --devices v100-sxm2-16gb,a100-sxm4-80gb
         -p amp-bf16 -b 128)
set_tests_properties(cli.plan_unsupported_precision PROPERTIES PASS_REGULAR_EXPRESSION
    "feasible:.*a100-sxm4-80gb x1.*infeasible:.*v100-sxm2-16gb x1 +v100-sxm2-16gb +128 +unsupported +.*no BF16 tensor cores")
add_test(NAME cli.plan_memory_capacity COMMAND roofplan-cli plan -m bert-large --devices v100-sxm2-16gb -b 256)
set_tests_properties(cli.plan_memory_capacity PROPERTIES PASS_REGULAR_EXPRESSION
    "no feasible option.*v100-sxm2-16gb x1 +v100-sxm2-16gb +256 +memory-capacity +batch 256 per GPU needs [0-9.]+ GiB of 16 GiB \\(the largest batch that fits is [0-9]+\\)")
add_test(NAME cli.plan_power_cap COMMAND roofplan-cli plan ${ROOFPLAN_PLAN_RESNET} --systems dgx2 --max-gpus 16 --power-cap 2000)
set_tests_properties(cli.plan_power_cap PROPERTIES PASS_REGULAR_EXPRESSION
    "5 options evaluated: 3 feasible, 2 infeasible.*dgx2 x8 .*draws 2400 W \\(8 x 300 W\\), above the power cap of 2000 W")
add_test(NAME cli.plan_global_batch COMMAND roofplan-cli plan -m resnet50 --global-batch 64 --systems r740-p40)
set_tests_properties(cli.plan_global_batch PROPERTIES PASS_REGULAR_EXPRESSION
    "global batch 64.*r740-p40 x2 +p40 +1 +32 .*infeasible:.*the global batch 64 does not split evenly over 3 GPUs")
add_test(NAME cli.plan_target_throughput COMMAND roofplan-cli plan -m alexnet --mode infer -p int8 -b 128
         --systems r740-p4,r740-p40 --target-throughput 20000 --price 1 --rank cost)
set_tests_properties(cli.plan_target_throughput PROPERTIES PASS_REGULAR_EXPRESSION
    "inference, int8.*ranked by cost per hour.*1 +r740-p40 x2 +p40 .*infeasible:.*r740-p4 x2 .*below the target of 20000")

# Errors: what was wrong and what to give.
foreach(case
        "unknown_system|--systems dgx3|unknown system 'dgx3'; did you mean"
        "unknown_device|--devices v1000|unknown device 'v1000'; did you mean"
        "negative_deadline|--dataset 1281167 --epochs 90 --deadline -5|--deadline must be a positive number of hours, got -5"
        "budget_without_price|--dataset 1281167 --epochs 90 --budget 1000|a budget needs prices per GPU-hour; roofplan has no price list: give --price P"
        "both_batches|--global-batch 1024|give --batch \\(per GPU\\) or --global-batch, not both"
        "deadline_without_dataset|--deadline 10|a deadline needs a time-to-train: give --dataset"
        "bad_price|--price dgx2=cheap|--price: 'dgx2=cheap' is not a price"
        "unknown_price_id|--systems dgx2 --price dgx=3|--price: 'dgx' is none of the options planned over.*did you mean dgx2"
        "bad_rank|--rank speed|unknown ranking 'speed'; accepted: time, cost, energy"
        "cost_rank_without_price|--rank cost|ranking by cost needs prices per GPU-hour"
        "epochs_without_dataset|--epochs 90|time-to-train needs both a dataset size")
    string(REPLACE "|" ";" parts "${case}")
    list(GET parts 0 name)
    list(GET parts 1 arguments)
    list(GET parts 2 expected)
    separate_arguments(arguments)
    add_test(NAME cli.plan_error_${name} COMMAND roofplan-cli plan -m resnet50 -b 256 ${arguments})
    set_tests_properties(cli.plan_error_${name} PROPERTIES PASS_REGULAR_EXPRESSION "roofplan: error: ${expected}")
    add_test(NAME cli.plan_error_${name}_exit COMMAND roofplan-cli plan -m resnet50 -b 256 ${arguments})
    set_tests_properties(cli.plan_error_${name}_exit PROPERTIES WILL_FAIL TRUE)
endforeach()

# Progress: CTest reads the output through pipes, so no progress line may appear (stderr is captured too).
add_test(NAME cli.plan_quiet_when_piped COMMAND roofplan-cli plan ${ROOFPLAN_PLAN_RESNET} --max-gpus 64)
set_tests_properties(cli.plan_quiet_when_piped PROPERTIES PASS_REGULAR_EXPRESSION "options evaluated"
                     FAIL_REGULAR_EXPRESSION "\\[ *[0-9]+/[0-9]+\\]")
# On a terminal (util-linux `script` gives the command one), the progress line appears on stderr, but never with
# --json.
find_program(ROOFPLAN_SCRIPT script)
if(ROOFPLAN_SCRIPT)
    add_test(NAME cli.plan_progress_on_terminal
             COMMAND ${ROOFPLAN_SCRIPT} -qec "$<TARGET_FILE:roofplan-cli> plan -m resnet50 --systems dgx2 -b 256" /dev/null)
    set_tests_properties(cli.plan_progress_on_terminal PROPERTIES PASS_REGULAR_EXPRESSION
        "\\[ *1/[0-9]+\\] plan resnet50: dgx2 x1.*options evaluated")
    add_test(NAME cli.plan_json_quiet_on_terminal
             COMMAND ${ROOFPLAN_SCRIPT} -qec "$<TARGET_FILE:roofplan-cli> plan -m resnet50 --systems dgx2 -b 256 --json" /dev/null)
    set_tests_properties(cli.plan_json_quiet_on_terminal PROPERTIES PASS_REGULAR_EXPRESSION "\"feasible\""
                         FAIL_REGULAR_EXPRESSION "\\[ *[0-9]+/[0-9]+\\]")
endif()

# --model-file models plan like zoo models.
add_test(NAME cli.plan_model_file COMMAND roofplan-cli plan --model-file ${PROJECT_SOURCE_DIR}/examples/models/tiny_cnn.json
         --systems dgx2 --max-gpus 2 -b 256)
set_tests_properties(cli.plan_model_file PROPERTIES PASS_REGULAR_EXPRESSION "plan for tiny-cnn, training.*1 +dgx2 x2 ")
# --csv: parsed as a spreadsheet would; the fastest option is 16 V100s drawing 16 x 300 W at 16 x 3 per hour.
find_program(ROOFPLAN_PLAN_PYTHON NAMES python3 HINTS /usr/bin)
if(ROOFPLAN_PLAN_PYTHON)
    add_test(NAME csv.plan COMMAND ${ROOFPLAN_PLAN_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/check_csv.py $<TARGET_FILE:roofplan-cli>
             --numeric rank,gpus,throughput_samples_per_s,time_to_train_s,cost,cost_per_hour,energy_j,power_w,memory_bytes
             --where rank=1 --expect system=dgx2 --expect gpus=16 --expect power_w=4800 --expect cost_per_hour=48
             --expect feasible=true --min-rows 6
             -- plan ${ROOFPLAN_PLAN_RESNET} --systems dgx2,exxact-ts4 --max-gpus 16 --price 3 --csv)
endif()
