// roofplan/models/classic.hpp — AlexNet, VGG-16/19 (torchvision) and OverFeat (convnet-benchmarks "fast").
#pragma once

#include <roofplan/models/detail/builder.hpp>

#include <array>

namespace roofplan::models {

/// torchvision.models.alexnet (the "one weird trick" single-tower variant, no LRN): 61,100,840 parameters.
constexpr Model alexnet(std::int64_t image_size = 224) {
    Model m("alexnet", "AlexNet (torchvision; Krizhevsky 2014 single-tower variant without LRN)",
            Shape{3, image_size, image_size});
    m.reserve(22);
    detail::ImageNet n(m, m.input_shape());
    n.conv("features.0", 64, 11, 4, 2);
    n.act("features.1");
    n.maxpool("features.2", 3, 2);
    n.conv("features.3", 192, 5, 1, 2);
    n.act("features.4");
    n.maxpool("features.5", 3, 2);
    n.conv("features.6", 384, 3, 1, 1);
    n.act("features.7");
    n.conv("features.8", 256, 3, 1, 1);
    n.act("features.9");
    n.conv("features.10", 256, 3, 1, 1);
    n.act("features.11");
    n.maxpool("features.12", 3, 2);
    n.adaptive_avgpool("avgpool", 6);
    n.flatten("flatten");
    n.dropout("classifier.0");
    n.linear("classifier.1", 4096);
    n.act("classifier.2");
    n.dropout("classifier.3");
    n.linear("classifier.4", 4096);
    n.act("classifier.5");
    n.linear("classifier.6", 1000);
    return m;
}

namespace detail {
/// torchvision's VGG: `config` lists conv widths, 0 for a 2×2 max-pool.
template <std::size_t N>
constexpr Model vgg(std::string_view id, std::string_view description, const std::array<std::int64_t, N>& config,
                    std::int64_t image_size) {
    Model m(id, description, Shape{3, image_size, image_size});
    m.reserve(2 * N + 10);
    ImageNet n(m, m.input_shape());
    std::int64_t index = 0;
    for (std::int64_t width : config) {
        if (width == 0) {
            n.maxpool(join<63>("features.", index++), 2, 2);
        } else {
            n.conv(join<63>("features.", index++), width, 3, 1, 1);
            n.act(join<63>("features.", index++));
        }
    }
    n.adaptive_avgpool("avgpool", 7);
    n.flatten("flatten");
    n.linear("classifier.0", 4096);
    n.act("classifier.1");
    n.dropout("classifier.2");
    n.linear("classifier.3", 4096);
    n.act("classifier.4");
    n.dropout("classifier.5");
    n.linear("classifier.6", 1000);
    return m;
}
}  // namespace detail

/// torchvision.models.vgg16 (configuration D, no batch norm): 138,357,544 parameters.
constexpr Model vgg16(std::int64_t image_size = 224) {
    constexpr std::array<std::int64_t, 18> config{64, 64, 0, 128, 128, 0, 256, 256, 256, 0,
                                                  512, 512, 512, 0, 512, 512, 512, 0};
    return detail::vgg("vgg16", "VGG-16 (torchvision, configuration D)", config, image_size);
}

/// torchvision.models.vgg19 (configuration E, no batch norm): 143,667,240 parameters.
constexpr Model vgg19(std::int64_t image_size = 224) {
    constexpr std::array<std::int64_t, 21> config{64, 64, 0, 128, 128, 0, 256, 256, 256, 256, 0,
                                                  512, 512, 512, 512, 0, 512, 512, 512, 512, 0};
    return detail::vgg("vgg19", "VGG-19 (torchvision, configuration E)", config, image_size);
}

/// OverFeat "fast" as soumith/convnet-benchmarks defines it (torch7/imagenet_winners/overfeat.lua): 231×231
/// input, five convolutions, three fully connected layers; 145,920,872 parameters.
constexpr Model overfeat(std::int64_t image_size = 231) {
    Model m("overfeat", "OverFeat fast (convnet-benchmarks definition, 231x231 input)",
            Shape{3, image_size, image_size});
    m.reserve(18);
    detail::ImageNet n(m, m.input_shape());
    n.conv("features.0", 96, 11, 4);
    n.act("features.1");
    n.maxpool("features.2", 2, 2);
    n.conv("features.3", 256, 5);
    n.act("features.4");
    n.maxpool("features.5", 2, 2);
    n.conv("features.6", 512, 3, 1, 1);
    n.act("features.7");
    n.conv("features.8", 1024, 3, 1, 1);
    n.act("features.9");
    n.conv("features.10", 1024, 3, 1, 1);
    n.act("features.11");
    n.maxpool("features.12", 2, 2);
    n.flatten("flatten");
    n.linear("classifier.0", 3072);
    n.act("classifier.1");
    n.linear("classifier.2", 4096);
    n.act("classifier.3");
    n.linear("classifier.4", 1000);
    return m;
}

}  // namespace roofplan::models
