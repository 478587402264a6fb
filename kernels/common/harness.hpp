// kernels/common/harness.hpp — the one header a validation program includes (after its libraries' headers:
// cuBLAS, cuDNN, NCCL, so that check.hpp checks their statuses too).  The harness: check.hpp (errors, exit
// statuses), args.hpp (command line), timing.hpp (lead kernel, warm-up, events, input rotation), verify.hpp
// (checked run, sampled positions, host threads), random.hpp (SplitMix64), report.hpp (records, table, JSON) and
// device_info.hpp (provenance); with them the standard headers they use (<algorithm>, <cstdint>, <cstdio>,
// <optional>, <span>, <string>, <string_view>, <vector>, ...).
#pragma once

#include "args.hpp"
#include "check.hpp"
#include "device_info.hpp"
#include "random.hpp"
#include "report.hpp"
#include "timing.hpp"
#include "verify.hpp"
