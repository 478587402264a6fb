// kernels/common/check.hpp — exit statuses and error checking for every validation program.
//
// CHECK(call) checks what a CUDA runtime, cuBLAS(Lt), cuDNN or NCCL call returns: on failure it prints
// file:line, the library, the call and the error, and exits with kExitCudaError.  The library overloads exist
// when that library's header was included before this one.  CHECK_LAUNCH("name") checks a kernel launch
// (bad configuration, missing kernel image, ...) through cudaGetLastError.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>

namespace roofplan::bench {

// Exit statuses: 3 is a CUDA, cuBLAS, cuDNN, NCCL or I/O error; 77 the conventional "skipped" (CTest's
// SKIP_RETURN_CODE).
inline constexpr int kExitVerifyFailed = 1, kExitUsage = 2, kExitCudaError = 3, kExitNoDevice = 77;

// The running program's name, for messages ("roofplan-gemm: error: ..."); set by Cli (args.hpp).
inline const char* g_program = "roofplan";

[[noreturn]] inline void fail(const char* library, const std::string& error, const char* call, const char* file,
                              int line) {
    std::fprintf(stderr, "%s:%d: %s error: %s: %s\n", file, line, library, call, error.c_str());
    std::exit(kExitCudaError);
}

inline void check(cudaError_t e, const char* call, const char* file, int line) {
    if (e != cudaSuccess)
        fail("CUDA", std::string(cudaGetErrorString(e)) + " (" + cudaGetErrorName(e) + ")", call, file, line);
}
#ifdef CUBLAS_VER_MAJOR
inline void check(cublasStatus_t s, const char* call, const char* file, int line) {
    if (s != CUBLAS_STATUS_SUCCESS)
        fail("cuBLAS", std::string(cublasGetStatusString(s)) + " (" + cublasGetStatusName(s) + ")", call, file, line);
}
#endif
#ifdef CUDNN_MAJOR
inline void check(cudnnStatus_t s, const char* call, const char* file, int line) {
    if (s != CUDNN_STATUS_SUCCESS) fail("cuDNN", cudnnGetErrorString(s), call, file, line);
}
#endif
#ifdef NCCL_MAJOR
inline void check(ncclResult_t r, const char* call, const char* file, int line) {
    if (r == ncclSuccess) return;
    const char* last = ncclGetLastError(nullptr);  // NCCL's last message; its argument is unused
    fail("NCCL", std::string(ncclGetErrorString(r)) + " (ncclResult_t " + std::to_string(int(r)) + ")" +
                     (last != nullptr && *last != '\0' ? std::string("; NCCL says: ") + last : std::string()),
         call, file, line);
}
#endif

// Runs the program's body; a failed host allocation (std::bad_alloc) becomes an error message and exit 3.
template <class Body>
int run_guarded(const char* what_the_host_keeps, Body&& body) {
    try {
        return body();
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "%s: error: out of host memory (%s)\n", g_program, what_the_host_keeps);
        return kExitCudaError;
    }
}

}  // namespace roofplan::bench

#define CHECK(call) ::roofplan::bench::check((call), #call, __FILE__, __LINE__)
#define CHECK_LAUNCH(name) ::roofplan::bench::check(cudaGetLastError(), "launch of " name, __FILE__, __LINE__)
