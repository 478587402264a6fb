// roofplan/models/resnet.hpp — torchvision ResNet-18/34/50/101/152 (v1.5: stride on the 3×3 convolution).
#pragma once

#include <roofplan/models/detail/builder.hpp>

#include <array>

namespace roofplan::models {

namespace detail {

/// One residual block of torchvision's ResNet.  Layer names follow torchvision's module paths; the second
/// and third uses of the block's shared `relu` module are named `relu:2`, `relu:3`.
constexpr void resnet_block(ImageNet& n, const Name& prefix, std::int64_t width, std::int64_t stride,
                            bool bottleneck) {
    const Shape input = n.shape();
    const std::int64_t out = bottleneck ? width * 4 : width;
    const bool downsample = stride != 1 || input[0] != out;
    if (bottleneck) {
        n.conv(join<63>(prefix, ".conv1"), width, 1, 1, 0, false);
        n.batchnorm(join<63>(prefix, ".bn1"));
        n.act(join<63>(prefix, ".relu"));
        n.conv(join<63>(prefix, ".conv2"), width, 3, stride, 1, false);
        n.batchnorm(join<63>(prefix, ".bn2"));
        n.act(join<63>(prefix, ".relu:2"));
        n.conv(join<63>(prefix, ".conv3"), out, 1, 1, 0, false);
        n.batchnorm(join<63>(prefix, ".bn3"));
    } else {
        n.conv(join<63>(prefix, ".conv1"), width, 3, stride, 1, false);
        n.batchnorm(join<63>(prefix, ".bn1"));
        n.act(join<63>(prefix, ".relu"));
        n.conv(join<63>(prefix, ".conv2"), width, 3, 1, 1, false);
        n.batchnorm(join<63>(prefix, ".bn2"));
    }
    const Shape main_path = n.shape();
    if (downsample) {
        n.set_shape(input);
        n.conv(join<63>(prefix, ".downsample.0"), out, 1, stride, 0, false);
        n.batchnorm(join<63>(prefix, ".downsample.1"));
        if (!(n.shape() == main_path)) roofplan::detail::fail("resnet: residual shapes disagree");
    }
    n.add(join<63>(prefix, ".add"));
    n.act(join<63>(prefix, bottleneck ? ".relu:3" : ".relu:2"));
}

constexpr Model resnet(std::string_view id, std::string_view description, const std::array<std::int64_t, 4>& blocks,
                       bool bottleneck, std::int64_t image_size) {
    Model m(id, description, Shape{3, image_size, image_size});
    std::int64_t total_blocks = blocks[0] + blocks[1] + blocks[2] + blocks[3];
    m.reserve(static_cast<std::size_t>(8 + total_blocks * (bottleneck ? 11 : 8) + 8));
    ImageNet n(m, m.input_shape());
    n.conv("conv1", 64, 7, 2, 3, false);
    n.batchnorm("bn1");
    n.act("relu");
    n.maxpool("maxpool", 3, 2, 1);
    constexpr std::array<std::int64_t, 4> widths{64, 128, 256, 512};
    for (std::size_t stage = 0; stage < 4; ++stage) {
        for (std::int64_t b = 0; b < blocks[stage]; ++b) {
            const std::int64_t stride = (stage > 0 && b == 0) ? 2 : 1;
            resnet_block(n, join<63>("layer", static_cast<std::int64_t>(stage + 1), ".", b), widths[stage], stride,
                         bottleneck);
        }
    }
    n.adaptive_avgpool("avgpool", 1);
    n.flatten("flatten");
    n.linear("fc", 1000);
    return m;
}

}  // namespace detail

/// torchvision.models.resnet18: 11,689,512 parameters.
constexpr Model resnet18(std::int64_t image_size = 224) {
    return detail::resnet("resnet18", "ResNet-18 (torchvision)", {2, 2, 2, 2}, false, image_size);
}
/// torchvision.models.resnet34: 21,797,672 parameters.
constexpr Model resnet34(std::int64_t image_size = 224) {
    return detail::resnet("resnet34", "ResNet-34 (torchvision)", {3, 4, 6, 3}, false, image_size);
}
/// torchvision.models.resnet50 (v1.5): 25,557,032 parameters.
constexpr Model resnet50(std::int64_t image_size = 224) {
    return detail::resnet("resnet50", "ResNet-50 v1.5 (torchvision)", {3, 4, 6, 3}, true, image_size);
}
/// torchvision.models.resnet101 (v1.5): 44,549,160 parameters.
constexpr Model resnet101(std::int64_t image_size = 224) {
    return detail::resnet("resnet101", "ResNet-101 v1.5 (torchvision)", {3, 4, 23, 3}, true, image_size);
}
/// torchvision.models.resnet152 (v1.5): 60,192,808 parameters.
constexpr Model resnet152(std::int64_t image_size = 224) {
    return detail::resnet("resnet152", "ResNet-152 v1.5 (torchvision)", {3, 8, 36, 3}, true, image_size);
}

}  // namespace roofplan::models
