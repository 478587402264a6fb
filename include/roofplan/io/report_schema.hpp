// roofplan/io/report_schema.hpp — the names in the JSON reports of the CUDA validation programs (kernels/):
// the programs' tool names, the top-level keys, and every key below them (provenance, device, config, records).
// The programs write these names; validate.hpp, calibrate.hpp and roofplan-bench parse them; docs/report-schemas.md
// says which program writes which field, in which unit.  A name here is a contract with recorded files
// (validation/results/): never rename or remove one, only add.  No dependencies, so nvcc compiles it with the kernels.
#pragma once

#include <string_view>

namespace roofplan::io::schema {

using name = std::string_view;

/// "schema_version" of every report written by the programs below.
inline constexpr int version = 1;

/// The programs, as their reports name themselves in "tool".
namespace tool {
inline constexpr name gemm = "roofplan-gemm", bandwidth = "roofplan-bandwidth", dp4a = "roofplan-dp4a",
                      nccl = "roofplan-nccl", conv = "roofplan-conv";
}

/// Top-level keys.  "skipped" (gemm, conv): the cases not run, with a reason; "complete" (conv): false while a
/// sweep is still being written case by case.
namespace key {
inline constexpr name tool = "tool", schema_version = "schema_version", provenance = "provenance", config = "config",
                      results = "results", skipped = "skipped", complete = "complete";
}

/// The keys below the top level.
namespace field {
// provenance
inline constexpr name program = "program", version = "version", date_utc = "date_utc", command_line = "command_line",
                      git_sha = "git_sha", git_sha_source = "git_sha_source", hostname = "hostname",
                      driver_version = "driver_version", driver_version_code = "driver_version_code",
                      runtime_version = "runtime_version", runtime_version_code = "runtime_version_code",
                      compiler = "compiler", environment = "environment", device = "device", devices = "devices";
inline constexpr name cublaslt_version = "cublaslt_version", cublaslt_version_code = "cublaslt_version_code",
                      cublas_header_version = "cublas_header_version", cudnn_version = "cudnn_version",
                      cudnn_version_code = "cudnn_version_code", cudnn_header_version = "cudnn_header_version",
                      nccl_version = "nccl_version", nccl_version_code = "nccl_version_code",
                      nccl_header_version = "nccl_header_version", nccl_library = "nccl_library",
                      nccl_nvls_enable_set_by_program = "nccl_nvls_enable_set_by_program",
                      visible_devices = "visible_devices", peer_access = "peer_access",
                      p2p_performance_rank = "p2p_performance_rank";
// provenance.device, and each of provenance.devices (nccl: with rank, host, free_memory_bytes_at_start)
inline constexpr name index = "index", device_name = "name", pci_bus_id = "pci_bus_id",
                      compute_capability = "compute_capability", sm_count = "sm_count",
                      clock_rate_khz = "clock_rate_khz", memory_clock_rate_khz = "memory_clock_rate_khz",
                      memory_bus_width_bits = "memory_bus_width_bits", l2_cache_bytes = "l2_cache_bytes",
                      global_memory_bytes = "global_memory_bytes", ecc_enabled = "ecc_enabled",
                      peak_gb_per_s_estimate = "peak_gb_per_s_estimate", rank = "rank", host = "host",
                      free_memory_bytes_at_start = "free_memory_bytes_at_start";
// config: the run's settings, and text that states each program's conventions
inline constexpr name warmup = "warmup", warmup_ms = "warmup_ms", repeats = "repeats", iters = "iters", seed = "seed",
                      samples = "samples", timing = "timing", rate = "rate", layout = "layout",
                      error_measure = "error_measure";
inline constexpr name precisions = "precisions", workspace_bytes = "workspace_bytes",
                      heuristic_results_requested = "heuristic_results_requested",
                      algo_index_used = "algo_index_used";                                              // gemm
inline constexpr name dtype = "dtype", element_bytes = "element_bytes", array_bytes = "array_bytes",
                      elements_per_array = "elements_per_array", scalar = "scalar", block_size = "block_size",
                      kernel_binary_version = "kernel_binary_version", kernel_ptx_version = "kernel_ptx_version",
                      bytes_convention = "bytes_convention";                                            // bandwidth
inline constexpr name test = "test", issue_iters = "issue_iters", issue_chains_per_thread = "issue_chains_per_thread",
                      gemm_layout = "gemm_layout", gemm_kernel = "gemm_kernel",
                      ops_convention = "ops_convention";                                                // dp4a
inline constexpr name ops = "ops", sizes_requested_bytes = "sizes_requested_bytes", redop = "redop", root = "root",
                      in_place = "in_place", send_buffer_bytes_per_gpu = "send_buffer_bytes_per_gpu",
                      recv_buffer_bytes_per_gpu = "recv_buffer_bytes_per_gpu", launch = "launch",
                      bandwidth = "bandwidth", verification = "verification";                           // nccl
inline constexpr name algo_search = "algo_search", workspace_limit_bytes = "workspace_limit_bytes",
                      shapes_file = "shapes_file", filter = "filter";                                   // conv
// records: the timing of a case (gemm, dp4a, conv; bandwidth names the three times median_s, min_s, max_s)
inline constexpr name time_s_median = "time_s_median", time_s_min = "time_s_min", time_s_max = "time_s_max",
                      median_s = "median_s", min_s = "min_s", max_s = "max_s", warm_runs = "warm_runs",
                      lead_s = "lead_s", host_enqueue_s = "host_enqueue_s", host_kept_ahead = "host_kept_ahead";
// records: verification
inline constexpr name verified = "verified", checked_elements = "checked_elements",
                      all_elements_written = "all_elements_written", max_rel_error = "max_rel_error",
                      rel_l2_error = "rel_l2_error", element_bound = "element_bound", norm_limit = "norm_limit",
                      reason = "reason", note = "note";
// records: gemm (and dp4a's gemm: m, n, k, input_sets, bytes_a, bytes_b)
inline constexpr name precision = "precision", m = "m", n = "n", k = "k", count = "count", label = "label",
                      tflops = "tflops", rate_unit = "rate_unit", algo_heuristics = "algo_heuristics",
                      algo_index = "algo_index", algo_id = "algo_id", tile_id = "tile_id", stages_id = "stages_id",
                      splitk = "splitk", reduction_scheme = "reduction_scheme", cluster_shape_id = "cluster_shape_id",
                      algo_workspace_bytes = "algo_workspace_bytes", waves = "waves", input_sets = "input_sets",
                      bytes_a = "bytes_a", bytes_b = "bytes_b", bytes_d = "bytes_d", compute_type = "compute_type",
                      ab_type = "ab_type", d_type = "d_type", scale_type = "scale_type";
// records: bandwidth
inline constexpr name kernel = "kernel", bytes_per_iteration = "bytes_per_iteration", gb_per_s = "gb_per_s",
                      fraction_of_memcpy = "fraction_of_memcpy", grid_blocks = "grid_blocks";
// records: dp4a
inline constexpr name tops = "tops", dp4a_per_sm_per_clock = "dp4a_per_sm_per_clock",
                      clock_rate_khz_used = "clock_rate_khz_used", dp4a_per_launch = "dp4a_per_launch",
                      ops_per_launch = "ops_per_launch", threads_per_block = "threads_per_block",
                      blocks_per_sm = "blocks_per_sm", registers_per_thread = "registers_per_thread",
                      chains_per_thread = "chains_per_thread", verify_iters = "verify_iters",
                      verified_threads = "verified_threads",
                      timed_output_sampled_threads = "timed_output_sampled_threads",
                      fraction_of_measured_peak = "fraction_of_measured_peak", full_check = "full_check",
                      load_width_bytes = "load_width_bytes", bytes_c = "bytes_c";
// records: nccl
inline constexpr name op = "op", bytes = "bytes", bytes_requested = "bytes_requested", ranks = "ranks",
                      algbw_gbps = "algbw_GBps", busbw_gbps = "busbw_GBps", busbw_factor = "busbw_factor",
                      busbw_factor_formula = "busbw_factor_formula", check = "check", repeat_times_s = "repeat_times_s",
                      rank_spread_s = "rank_spread_s", host_enqueue_s_max = "host_enqueue_s_max";
// records: conv (and n, k, label, precision, layout above)
inline constexpr name pass = "pass", c = "c", h = "h", w = "w", r = "r", s = "s", stride = "stride", pad = "pad",
                      dilation = "dilation", p = "p", q = "q", macs = "macs", algo = "algo",
                      algo_math_type = "algo_math_type", requested_math_type = "requested_math_type",
                      algos_offered = "algos_offered", terms_per_element = "terms_per_element";
}  // namespace field

/// A text each report's "config" carries to state a convention of its records (units, what a field counts).
struct Convention {
    name key, text;
};

/// The conventions in each program's config (roofplan-nccl adds "launch": one process or MPI).
namespace conventions {
inline constexpr Convention gemm[] = {
    {field::layout,
     "TN, CUBLASLT_ORDER_COL: A stored K x M (lda = K) with op(A) = T, B stored K x N (ldb = K), D M x N "
     "(ldd = M); alpha = 1, beta = 0, C = D; strided batch of count"},
    {field::timing,
     "CUDA events between back-to-back runs on one stream behind a lead kernel; inputs rotate through "
     "input_sets copies of A and B so that (input_sets - 1)(|A| + |B|) >= 2 x L2 where memory allows"},
    {field::rate, "tflops = 2 m n k count / time_s_median / 1e12 (tera-operations for int8: TOPS)"},
    {field::error_measure,
     "max_rel_error = max |d - ref| / sum_k |a_k b_k| over the checked elements; rel_l2_error = "
     "||d - ref||_2 / ||ref||_2 over them; int8 exact"}};
inline constexpr Convention bandwidth[] = {
    {field::bytes_convention, "STREAM: copy and scale 2 arrays, triad 3 arrays, memcpy 2 arrays per iteration; GB = "
                              "1e9 bytes"}};
inline constexpr Convention dp4a[] = {
    {field::gemm_layout,
     "C (int32, M x N, row-major) = A (int8, M x K, row-major) . B^T, B stored N x K row-major (TN)"},
    {field::gemm_kernel,
     "dp4a_gemm_kernel: 128 x 128 block tile, 256 threads, 8 x 8 int32 micro-tile per thread, "
     "64-byte K step, two shared-memory buffers, 16-byte global loads when K % 16 == 0"},
    {field::ops_convention, "one DP4A = 4 int8 multiply-adds = 8 operations; GEMM ops = 2 M N K"},
    {field::timing,
     "CUDA events between back-to-back launches on one stream behind a lead kernel; GEMM inputs rotate "
     "through input_sets copies of A and B so that (input_sets - 1)(|A| + |B|) >= 2 x L2 where memory "
     "allows"}};
inline constexpr Convention nccl[] = {
    {field::bytes,
     "S as nccl-tests counts it: the buffer for allreduce, broadcast, reduce; the total over ranks "
     "(recvcount x ranks x 4) for reducescatter; the output (sendcount x ranks x 4) for allgather"},
    {field::bandwidth,
     "algbw_GBps = bytes / time_s_median / 1e9; busbw_GBps = algbw_GBps x busbw_factor (allreduce "
     "2(n-1)/n, reducescatter and allgather (n-1)/n, broadcast and reduce 1)"},
    {field::timing,
     "per measurement: a lead kernel on every stream, a CUDA event on every stream, iters back-to-back "
     "collectives, an event on every stream; time = max over ranks of elapsed / iters; median, min and "
     "max over repeats measurements, after warmup collectives"},
    {field::verification,
     "inputs m x 2^-k (m in [-8,-1] U [1,8], k in 0..3) from seeded SplitMix64 streams, receive "
     "buffers poisoned with NaN, one run compared exactly with a host reference: every element "
     "when bytes <= 64 MiB, else the first and last 1024 and 1000000 other distinct random "
     "positions of each checked rank's receive buffer; checked_elements counts over ranks (reduce: "
     "the root only)"}};
inline constexpr name nccl_launch_single = "one process, ncclCommInitAll over the first ranks visible devices; each "
                                           "collective one ncclGroupStart/End over all ranks",
                      nccl_launch_mpi = "MPI, one process per rank (mpirun), ncclCommInitRank with the unique id of "
                                        "rank 0 (MPI_Bcast); each process on the GPU of its node-local rank";
inline constexpr Convention conv[] = {
    {field::rate, "tflops = 2 n k p q c r s / time_s_median / 1e12 (MACs of the pass; bias not included)"},
    {field::timing, "CUDA events between back-to-back runs behind a lead kernel; inputs rotate through input_sets "
                    "copies so that (input_sets - 1) x (|in1| + |in2|) >= 2 x L2 where memory allows"}};
}  // namespace conventions

/// The precision names of the gemm, conv and dp4a records ("precision"): what the kernels compute, not the
/// engine's modes (roofplan::Precision calls fp16 and bf16 amp-fp16 and amp-bf16).
namespace precision {
inline constexpr name fp32 = "fp32", tf32 = "tf32", fp16 = "fp16", bf16 = "bf16", int8 = "int8";
}

}  // namespace roofplan::io::schema
