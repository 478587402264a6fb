// roofplan/models/googlenet.hpp — torchvision GoogLeNet (Inception v1, without the auxiliary heads).
#pragma once

#include <roofplan/models/detail/builder.hpp>

namespace roofplan::models {

namespace detail {

/// An Inception module as torchvision builds it.  Note torchvision's "5×5" branch uses a 3×3 kernel (kept for
/// weight compatibility, pytorch/vision#906); every max-pool uses ceil_mode.
constexpr void inception(ImageNet& n, const Name& prefix, std::int64_t ch1x1, std::int64_t ch3x3red,
                         std::int64_t ch3x3, std::int64_t ch5x5red, std::int64_t ch5x5, std::int64_t pool_proj) {
    const Shape input = n.shape();
    n.basic_conv(join<63>(prefix, ".branch1"), ch1x1, 1);
    n.set_shape(input);
    n.basic_conv(join<63>(prefix, ".branch2.0"), ch3x3red, 1);
    n.basic_conv(join<63>(prefix, ".branch2.1"), ch3x3, 3, 1, 1);
    n.set_shape(input);
    n.basic_conv(join<63>(prefix, ".branch3.0"), ch5x5red, 1);
    n.basic_conv(join<63>(prefix, ".branch3.1"), ch5x5, 3, 1, 1);
    n.set_shape(input);
    n.maxpool(join<63>(prefix, ".branch4.0"), 3, 1, 1, true);
    n.basic_conv(join<63>(prefix, ".branch4.1"), pool_proj, 1);
    n.concat(join<63>(prefix, ".cat"), Shape{ch1x1 + ch3x3 + ch5x5 + pool_proj, input[1], input[2]}, 4);
}

}  // namespace detail

/// torchvision.models.googlenet(aux_logits=False, transform_input=False): 6,624,904 parameters.
constexpr Model googlenet(std::int64_t image_size = 224) {
    Model m("googlenet", "GoogLeNet / Inception v1 (torchvision, no auxiliary classifiers)",
            Shape{3, image_size, image_size});
    m.reserve(240);
    detail::ImageNet n(m, m.input_shape());
    n.basic_conv("conv1", 64, 7, 2, 3);
    n.maxpool("maxpool1", 3, 2, 0, true);
    n.basic_conv("conv2", 64, 1);
    n.basic_conv("conv3", 192, 3, 1, 1);
    n.maxpool("maxpool2", 3, 2, 0, true);
    detail::inception(n, "inception3a", 64, 96, 128, 16, 32, 32);
    detail::inception(n, "inception3b", 128, 128, 192, 32, 96, 64);
    n.maxpool("maxpool3", 3, 2, 0, true);
    detail::inception(n, "inception4a", 192, 96, 208, 16, 48, 64);
    detail::inception(n, "inception4b", 160, 112, 224, 24, 64, 64);
    detail::inception(n, "inception4c", 128, 128, 256, 24, 64, 64);
    detail::inception(n, "inception4d", 112, 144, 288, 32, 64, 64);
    detail::inception(n, "inception4e", 256, 160, 320, 32, 128, 128);
    n.maxpool("maxpool4", 2, 2, 0, true);
    detail::inception(n, "inception5a", 256, 160, 320, 32, 128, 128);
    detail::inception(n, "inception5b", 384, 192, 384, 48, 128, 128);
    n.adaptive_avgpool("avgpool", 1);
    n.flatten("flatten");
    n.dropout("dropout", 0.2);
    n.linear("fc", 1000);
    return m;
}

}  // namespace roofplan::models
