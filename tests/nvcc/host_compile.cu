// The core headers compile under nvcc as host code (they never need CUDA themselves).
#include <roofplan/roofplan.hpp>

#include <cstdio>

int main() {
    constexpr auto params = roofplan::models::resnet50().params();
    static_assert(params == 25'557'032);
    std::printf("resnet50 params under nvcc: %lld\n", static_cast<long long>(params));
    return 0;
}
