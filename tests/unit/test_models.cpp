// The zoo against independent sources: the real implementations' parameter counts (SPEC.md §1), torchvision's
// per-model multiply-adds, the paper's Table II, and structural properties.
#include <roofplan/roofplan.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <string>

using namespace roofplan;

TEST_CASE("parameter counts equal the real implementations exactly") {
    const std::pair<const char*, std::int64_t> expected[] = {
        {"alexnet", 61'100'840},     {"vgg16", 138'357'544},      {"vgg19", 143'667'240},
        {"googlenet", 6'624'904},    {"resnet18", 11'689'512},    {"resnet34", 21'797'672},
        {"resnet50", 25'557'032},    {"resnet101", 44'549'160},   {"resnet152", 60'192'808},
        {"bert-base", 109'482'240},  {"bert-large", 335'141'888}, {"gpt2", 124'439'808},
        // Heads: BertForMultipleChoice adds Linear(768, 1); BertForQuestionAnswering drops the pooler
        // (-590,592) and adds Linear(768, 2).
        {"bert-swag", 109'482'240 + 769}, {"bert-squad", 109'482'240 - 590'592 + 1'538},
        // OpenSeq2Seq GNMT-like: 3072·32768 + 174,131,201 (see models/gnmt.hpp).
        {"gnmt", 274'794'497}, {"overfeat", 145'920'872}};
    for (const auto& [id, params] : expected) {
        CAPTURE(id);
        CHECK(models::build(id).params() == params);
    }
}

TEST_CASE("forward multiply-adds equal torchvision's (forward hooks on Conv2d and Linear)") {
    // Measured with torch 1.13 / torchvision 0.14 (tests/oracle/torchvision_oracle.py recomputes them in CI).
    const std::pair<const char*, std::int64_t> expected[] = {
        {"alexnet", 714'188'480},        {"vgg16", 15'470'264'320},     {"vgg19", 19'632'062'464},
        {"googlenet", 1'498'376'192},    {"resnet18", 1'814'073'344},   {"resnet34", 3'663'761'408},
        {"resnet50", 4'089'184'256},     {"resnet101", 7'801'405'440},  {"resnet152", 11'513'626'624},
        {"overfeat", 2'801'403'904}};
    for (const auto& [id, macs] : expected) {
        CAPTURE(id);
        CHECK(models::build(id).forward_macs().value() == macs);
    }
}

TEST_CASE("Table II: the CNN rows agree with the paper within 2% (ops) and 0.01 M (params)") {
    struct Row {
        const char* id;
        double params_m;
        double ops_g;
    };
    const Row rows[] = {{"alexnet", 61.10, 0.72},   {"resnet18", 11.69, 1.83},  {"resnet50", 25.56, 4.14},
                        {"resnet101", 44.55, 7.88}, {"resnet152", 60.19, 11.62}};
    for (const Row& row : rows) {
        CAPTURE(row.id);
        const Model m = models::build(row.id);
        CHECK(std::fabs(static_cast<double>(m.params()) / 1e6 - row.params_m) <= 0.01);
        const double ops = static_cast<double>(m.paper_ops()) / 1e9;
        CHECK(std::fabs(ops - row.ops_g) / row.ops_g <= 0.02);
    }
}

TEST_CASE("BERT operations follow the counting rule, not the paper's table (see docs/counting.md)") {
    // Per token and layer, BERT-base's dense layers cost 4·768² + 2·768·3072 MACs; attention adds 2·L·768.
    const std::int64_t dense_per_token = 4 * 768 * 768 + 2 * 768 * 3072;
    const Model squad = models::build("bert-squad");
    const std::int64_t expected = 12 * (384 * dense_per_token + 2LL * 384 * 384 * 768) + 384LL * 768 * 2;
    CHECK(squad.forward_macs().value() == expected);
    // SWAG runs the encoder once per choice: 4 sequences of 80 tokens.
    const Model swag = models::build("bert-swag");
    CHECK(swag.forward_macs().value() ==
          4 * (12 * (80 * dense_per_token + 2LL * 80 * 80 * 768) + 768LL * 768 + 768));
}

TEST_CASE("every zoo model: unique layer names, positive work, backward about twice forward") {
    for (const auto& entry : models::zoo()) {
        CAPTURE(entry.id);
        const Model m = entry.build(entry.uses_seq() ? models::ModelOptions{.seq = 64} : models::ModelOptions{});
        std::set<std::string> names;
        for (const Node& n : m.nodes()) CHECK(names.insert(std::string(n.name.view())).second);
        const StepWork step = m.training_work(4, Precision::amp_fp16);
        CHECK(step.forward.macs.value() > 0);
        const double ratio = static_cast<double>(step.backward().macs.value()) /
                             static_cast<double>(step.forward.macs.value());
        CHECK(ratio > 1.6);   // the first layer's data gradient is skipped
        CHECK(ratio <= 2.0 + 1e-9 + (entry.family == models::Family::transformer ? 0.5 : 0.0));
        CHECK(step.total().bytes().value() > 0);
    }
}

namespace {
bool same(const PassCost& a, const PassCost& b) {
    return a.macs == b.macs && a.vector_flops == b.vector_flops && a.weight_elements_read == b.weight_elements_read &&
           a.activation_elements_read == b.activation_elements_read &&
           a.activation_elements_written == b.activation_elements_written &&
           a.gradient_elements_written == b.gradient_elements_written && a.gemm == b.gemm;
}
}  // namespace

TEST_CASE("the cached affine costs equal the layers' own costs at every batch, node by node and in total") {
    for (const auto& entry : models::zoo()) {
        CAPTURE(entry.id);
        const Model m = entry.build(entry.uses_seq() ? models::ModelOptions{.seq = 96} : models::ModelOptions{});
        for (const std::int64_t batch : {1, 7, 128, 4096}) {
            CAPTURE(batch);
            PassCost walked[3]{};
            for (const Node& n : m.nodes()) {
                CHECK(n.affine);
                for (int p = 0; p < 3; ++p) {
                    const auto pass = static_cast<Pass>(p);
                    const PassCost direct = roofplan::cost(n.layer, pass, batch * n.repeat);
                    CHECK(same(n.cost(pass, batch), direct));
                    if (n.runs(pass)) walked[p] += direct;
                }
            }
            const StepWork step = m.training_work(batch, Precision::amp_bf16);
            CHECK(step.forward.flops() == walked[0].flops());
            CHECK(step.backward_data.bytes() == to_work(walked[1], Pass::backward_data, Precision::amp_bf16).bytes());
            CHECK(step.backward_weight.gradient_bytes_written ==
                  to_work(walked[2], Pass::backward_weight, Precision::amp_bf16).gradient_bytes_written);
        }
    }
}

TEST_CASE("counts that overflow 64 bits at a huge batch are an error, not a wrapped number") {
    const Model m = models::build("resnet50");
    CHECK_THROWS_WITH_AS(m.training_work(std::int64_t{1} << 50, Precision::fp32), doctest::Contains("overflows 64 bits"),
                         roofplan::invalid_argument);
}

TEST_CASE("work grows with batch and sequence length") {
    const Model small = models::build("bert-base", {.seq = 128});
    const Model large = models::build("bert-base", {.seq = 256});
    CHECK(large.forward_macs().value() > 2 * small.forward_macs().value());  // attention is super-linear
    const Model r = models::build("resnet50");
    CHECK(r.training_work(64, Precision::fp32).total().flops().value() ==
          2 * r.training_work(32, Precision::fp32).total().flops().value());
    CHECK(r.training_work(32, Precision::amp_fp16).total().bytes().value() <
          r.training_work(32, Precision::fp32).total().bytes().value());
    // A bigger image costs more.
    CHECK(models::build("resnet50", {.image_size = 299}).forward_macs().value() > r.forward_macs().value());
}

TEST_CASE("zoo lookups are case-insensitive and unknown ids suggest close matches") {
    CHECK(models::find_model("ResNet50").id == "resnet50");
    try {
        (void)models::find_model("resnet-50");
        FAIL("expected an error");
    } catch (const roofplan::invalid_argument& e) {
        const std::string what = e.what();
        CHECK(what.find("did you mean resnet50") != std::string::npos);
        CHECK(what.find("Known models:") != std::string::npos);
    }
    CHECK_THROWS_WITH_AS(models::build("resnet50", {.seq = 128}), doctest::Contains("not a sequence length"),
                         roofplan::invalid_argument);
    CHECK_THROWS_WITH_AS(models::build("bert-base", {.seq = 513}), doctest::Contains("[1, 512]"),
                         roofplan::invalid_argument);
    CHECK_THROWS_AS(models::build("alexnet", {.image_size = 16}), roofplan::invalid_argument);
    CHECK_THROWS_AS(Model().training_work(0, Precision::fp32), roofplan::invalid_argument);
}

TEST_CASE("precision names parse and unknown ones are rejected") {
    CHECK(parse_precision("amp-bf16") == Precision::amp_bf16);
    CHECK(parse_precision("fp16") == Precision::amp_fp16);
    CHECK_THROWS_WITH_AS(parse_precision("fp8"), doctest::Contains("accepted: fp32, tf32, amp-fp16, amp-bf16, int8"),
                         roofplan::invalid_argument);
}

TEST_CASE("every enum has one name table: names, aliases, parse errors about the field with a suggestion") {
    for (Precision p : enum_values<Precision>()) CHECK(parse_enum<Precision>(to_string(p)) == p);
    for (Collective c : enum_values<Collective>()) CHECK(parse_collective(to_string(c)) == c);
    CHECK(to_string(Phase::backward_weight) == "backward-weight");
    CHECK(to_string(models::Family::transformer) == "transformer");
    CHECK(parse_mode("inference") == Mode::infer);
    static_assert(parse_precision("amp-fp16") == Precision::amp_fp16);
    static_assert(enum_count<MathClass> == all_math_classes.size());
    try {
        (void)parse_optimizer("adamm");
        FAIL("no error");
    } catch (const Error& e) {
        CHECK(e.field() == "optimizer");
        CHECK(std::string(e.what()) == "unknown optimizer 'adamm'; accepted: sgd (with momentum), adam; did you mean adam?");
    }
    EnumArray<Phase, double> time{};
    time[Phase::optimizer] = 2;
    CHECK(time.values[3] == 2);
}

TEST_CASE("errors name the field they are about; a front end writes the fields its own way") {
    try {
        (void)models::build("resnet50", {.seq = 12});
        FAIL("no error");
    } catch (const Error& e) {
        CHECK(e.field() == "seq");
        CHECK(std::string(e.what()) == "resnet50 is a CNN: it takes an image size, not a sequence length (seq)");
        CHECK(e.message([](std::string_view f) { return "--" + std::string(f); }) ==
              "resnet50 is a CNN: it takes an image size, not a sequence length (--seq)");
    }
    CHECK(did_you_mean("resnet5", std::vector<std::string>{"resnet50", "alexnet"}) == "did you mean resnet50?");
    CHECK(did_you_mean("zzz", std::vector<std::string>{"resnet50"}).empty());
}
