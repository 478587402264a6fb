// roofplan/models/detail/builder.hpp — helpers that build zoo models layer by layer (internal).
#pragma once

#include <roofplan/model/model.hpp>

namespace roofplan::models::detail {

using roofplan::join;
using Name = LayerName;

/// Builds a feed-forward image network, tracking the current C×H×W (or flat) shape.  The first layer that
/// reads the network input is marked as needing no input gradient.
class ImageNet {
public:
    constexpr ImageNet(Model& model, Shape input) : model_(model), shape_(input) {}

    [[nodiscard]] constexpr Shape shape() const { return shape_; }
    constexpr void set_shape(Shape s) { shape_ = s; }
    [[nodiscard]] constexpr std::int64_t channels() const { return shape_[0]; }

    constexpr Shape conv(Name name, std::int64_t out, Extent2 kernel, Extent2 stride = 1, Extent2 padding = 0,
                         bool bias = true, std::int64_t groups = 1) {
        return push(name, Conv2D{{.in_channels = shape_[0], .out_channels = out, .in_height = shape_[1],
                                  .in_width = shape_[2], .kernel = kernel, .stride = stride, .padding = padding,
                                  .groups = groups, .bias = bias}});
    }
    constexpr Shape batchnorm(Name name) {
        return push(name, BatchNorm2d{{.channels = shape_[0], .height = shape_[1], .width = shape_[2]}});
    }
    constexpr Shape act(Name name, ActivationKind kind = ActivationKind::relu) {
        return push(name, Activation{{.kind = kind, .shape = shape_}});
    }
    constexpr Shape pool(Name name, PoolKind kind, Extent2 kernel, Extent2 stride = 0, Extent2 padding = 0,
                         bool ceil_mode = false) {
        return push(name, Pool2D{{.kind = kind, .channels = shape_[0], .in_height = shape_[1], .in_width = shape_[2],
                                  .kernel = kernel, .stride = stride, .padding = padding, .ceil_mode = ceil_mode}});
    }
    constexpr Shape maxpool(Name name, Extent2 kernel, Extent2 stride = 0, Extent2 padding = 0, bool ceil = false) {
        return pool(name, PoolKind::max, kernel, stride, padding, ceil);
    }
    constexpr Shape adaptive_avgpool(Name name, Extent2 output) {
        return push(name, AdaptiveAvgPool2D{{.channels = shape_[0], .in_height = shape_[1], .in_width = shape_[2],
                                             .output = output}});
    }
    constexpr Shape flatten(Name name) { return push(name, Flatten{{.shape = shape_}}); }
    constexpr Shape dropout(Name name, double p = 0.5) {
        return push(name, Dropout{{.shape = shape_, .probability = p}});
    }
    constexpr Shape linear(Name name, std::int64_t out, bool bias = true) {
        return push(name, Linear{{.in_features = shape_.elements(), .out_features = out, .bias = bias}});
    }
    constexpr Shape lrn(Name name, std::int64_t size) {
        return push(name, LocalResponseNorm{{.channels = shape_[0], .height = shape_[1], .width = shape_[2],
                                             .size = size}});
    }
    constexpr Shape add(Name name, std::int64_t inputs = 2) { return push(name, Add{{.shape = shape_, .inputs = inputs}}); }
    constexpr Shape concat(Name name, Shape output, std::int64_t inputs) {
        return push(name, Concat{{.output = output, .inputs = inputs}});
    }

    /// Conv → BatchNorm → ReLU, named `<prefix>.conv`, `.bn`, `.relu` (torchvision's BasicConv2d).
    constexpr Shape basic_conv(Name prefix, std::int64_t out, Extent2 kernel, Extent2 stride = 1, Extent2 padding = 0) {
        conv(join<63>(prefix, ".conv"), out, kernel, stride, padding, false);
        batchnorm(join<63>(prefix, ".bn"));
        return act(join<63>(prefix, ".relu"));
    }

    template <Layer L>
    constexpr Shape push(Name name, const L& layer) {
        shape_ = model_.add(name, layer, !first_);
        if (!std::same_as<L, Flatten>) first_ = false;
        return shape_;
    }

private:
    Model& model_;
    Shape shape_;
    bool first_ = true;
};

}  // namespace roofplan::models::detail
