// Counting a custom CNN at compile time: build it from layer descriptors in a constexpr function and let
// static_assert check the arithmetic before the program even runs.
#include <roofplan/roofplan.hpp>

#include <cstdio>

using namespace roofplan;

/// A small CIFAR-10 network: two conv-BN-ReLU-pool stages and a classifier.
constexpr Model cifar_net() {
    Model m("cifar-net", "a small CIFAR-10 CNN", Shape{3, 32, 32});
    Shape s = m.add("conv1", Conv2D{{.in_channels = 3, .out_channels = 32, .in_height = 32, .in_width = 32,
                                     .kernel = 3, .padding = 1}},
                    /*needs_input_gradient=*/false);
    s = m.add("bn1", BatchNorm2d{{.channels = s[0], .height = s[1], .width = s[2]}});
    s = m.add("relu1", Activation{{.kind = ActivationKind::relu, .shape = s}});
    s = m.add("pool1", Pool2D{{.kind = PoolKind::max, .channels = s[0], .in_height = s[1], .in_width = s[2], .kernel = 2}});
    s = m.add("conv2", Conv2D{{.in_channels = s[0], .out_channels = 64, .in_height = s[1], .in_width = s[2],
                               .kernel = 3, .padding = 1}});
    s = m.add("bn2", BatchNorm2d{{.channels = s[0], .height = s[1], .width = s[2]}});
    s = m.add("relu2", Activation{{.kind = ActivationKind::relu, .shape = s}});
    s = m.add("pool2", Pool2D{{.kind = PoolKind::max, .channels = s[0], .in_height = s[1], .in_width = s[2], .kernel = 2}});
    s = m.add("flatten", Flatten{{.shape = s}});
    m.add("fc", Linear{{.in_features = s[0], .out_features = 10}});
    return m;
}

// conv1: 32·(3·9+1) = 896; bn1: 64; conv2: 64·(32·9+1) = 18,496; bn2: 128; fc: 10·(4096+1) = 40,970.
static_assert(cifar_net().params() == 896 + 64 + 18'496 + 128 + 40'970, "parameter arithmetic");
// conv1: 32·32·32·27 MACs; conv2: 16·16·64·288; fc: 4096·10.
static_assert(cifar_net().forward_macs().value() == 32 * 32 * 32 * 27 + 16 * 16 * 64 * 288 + 4096 * 10,
              "MAC arithmetic");

int main() {
    constexpr std::int64_t params = cifar_net().params();
    constexpr std::int64_t macs = cifar_net().forward_macs().value();
    const Model m = cifar_net();
    std::printf("%s: %lld parameters, %lld MACs (%lld FLOPs) per image\n", std::string(m.id()).c_str(),
                static_cast<long long>(params), static_cast<long long>(macs),
                static_cast<long long>(m.forward_flops().value()));
    for (const Node& n : m.nodes())
        std::printf("  %-8s %-12s %-10s params %6lld  MACs %9lld\n", std::string(n.name.view()).c_str(),
                    std::string(type_label(n.layer)).c_str(), output_shape(n.layer).to_string().c_str(),
                    static_cast<long long>(roofplan::params(n.layer)),
                    static_cast<long long>(forward_macs(n.layer).value()));
    return 0;
}
