// A consumer of the installed / embedded roofplan package.
#include <roofplan/roofplan.hpp>

#include <cstdio>

int main() {
    static_assert(roofplan::models::resnet50().params() == 25'557'032);
    const auto model = roofplan::models::build("bert-base", {.seq = 128});
    std::printf("consumer ok: bert-base %lld params\n", static_cast<long long>(model.params()));
    return model.params() == 109'482'240 ? 0 : 1;
}
