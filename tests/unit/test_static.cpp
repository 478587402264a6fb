// Compile-time facts: the zoo is built in constant evaluation and its counts equal the real implementations.
#include <roofplan/roofplan.hpp>

namespace m = roofplan::models;

static_assert(m::alexnet().params() == 61'100'840);
static_assert(m::vgg16().params() == 138'357'544);
static_assert(m::vgg19().params() == 143'667'240);
static_assert(m::googlenet().params() == 6'624'904);
static_assert(m::resnet18().params() == 11'689'512);
static_assert(m::resnet34().params() == 21'797'672);
static_assert(m::resnet50().params() == 25'557'032);
static_assert(m::resnet101().params() == 44'549'160);
static_assert(m::resnet152().params() == 60'192'808);
static_assert(m::bert_base().params() == 109'482'240);
static_assert(m::bert_large().params() == 335'141'888);
static_assert(m::gpt2().params() == 124'439'808);
static_assert(m::llama2_7b().params() == 6'738'415'616);
static_assert(m::llama3_8b().params() == 8'030'261'248);
// torchvision's documented GFLOPS (multiply-adds): ResNet-50 4.09, AlexNet 0.71.
static_assert(m::resnet50().forward_macs().value() == 4'089'184'256);
static_assert(m::alexnet().forward_macs().value() == 714'188'480);
// Layer descriptors are literal types.
static_assert(roofplan::Conv2D{{.in_channels = 3, .out_channels = 64, .in_height = 224, .in_width = 224, .kernel = 7,
                                .stride = 2, .padding = 3, .bias = false}}
                  .output_shape() == roofplan::Shape{64, 112, 112});
