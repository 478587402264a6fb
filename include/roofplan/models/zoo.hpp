// roofplan/models/zoo.hpp — the model zoo by id: lookup with suggestions, and building with options.
#pragma once

#include <roofplan/detail/suggest.hpp>
#include <roofplan/models/classic.hpp>
#include <roofplan/models/gnmt.hpp>
#include <roofplan/models/googlenet.hpp>
#include <roofplan/models/resnet.hpp>
#include <roofplan/models/transformer.hpp>

#include <array>
#include <span>
#include <string>
#include <string_view>

namespace roofplan::models {

/// Options for building a zoo model; 0 means "the model's default".
struct ModelOptions {
    std::int64_t seq = 0;         ///< sequence length (transformers, GNMT)
    std::int64_t image_size = 0;  ///< square input resolution (CNNs)
};

enum class Family { cnn, transformer, rnn };

}  // namespace roofplan::models

template <>
struct roofplan::EnumNames<roofplan::models::Family> {
    static constexpr std::string_view field = "family";
    static constexpr std::array<std::string_view, 3> names{"cnn", "transformer", "rnn"};
};

namespace roofplan::models {

using roofplan::to_string;

/// One zoo entry: its id, what it is, its defaults and where its definition comes from.
struct ZooEntry {
    std::string_view id;
    Family family;
    std::int64_t default_size;  ///< default seq (transformers, GNMT) or image size (CNNs)
    std::string_view source;
    Model (*builder)(std::int64_t size);

    [[nodiscard]] constexpr bool uses_seq() const { return family != Family::cnn; }
    /// Builds the model; rejects options that do not apply (a sequence length for a CNN, say).
    [[nodiscard]] constexpr Model build(const ModelOptions& options = {}) const {
        if (uses_seq() && options.image_size != 0)
            roofplan::detail::fail_about("image_size", id, " takes a sequence length (", field_ref("seq"), "), not an image size");
        if (!uses_seq() && options.seq != 0)
            roofplan::detail::fail_about("seq", id, " is a CNN: it takes an image size, not a sequence length (", field_ref("seq"), ")");
        const std::int64_t size = uses_seq() ? options.seq : options.image_size;
        if (size < 0) roofplan::detail::fail(id, ": size must be positive, got ", size);
        return builder(size == 0 ? default_size : size);
    }
};

namespace detail {
template <Model (*F)(std::int64_t)>
constexpr Model call(std::int64_t size) { return F(size); }
}  // namespace detail

/// Every model of the zoo, in a stable order.
inline constexpr std::array<ZooEntry, 18> zoo_entries{{
    {"alexnet", Family::cnn, 224, "torchvision.models.alexnet", &detail::call<alexnet>},
    {"vgg16", Family::cnn, 224, "torchvision.models.vgg16", &detail::call<vgg16>},
    {"vgg19", Family::cnn, 224, "torchvision.models.vgg19", &detail::call<vgg19>},
    {"googlenet", Family::cnn, 224, "torchvision.models.googlenet(aux_logits=False)", &detail::call<googlenet>},
    {"overfeat", Family::cnn, 231, "soumith/convnet-benchmarks torch7/imagenet_winners/overfeat.lua",
     &detail::call<overfeat>},
    {"resnet18", Family::cnn, 224, "torchvision.models.resnet18", &detail::call<resnet18>},
    {"resnet34", Family::cnn, 224, "torchvision.models.resnet34", &detail::call<resnet34>},
    {"resnet50", Family::cnn, 224, "torchvision.models.resnet50", &detail::call<resnet50>},
    {"resnet101", Family::cnn, 224, "torchvision.models.resnet101", &detail::call<resnet101>},
    {"resnet152", Family::cnn, 224, "torchvision.models.resnet152", &detail::call<resnet152>},
    {"bert-base", Family::transformer, 128, "Hugging Face BertModel, bert-base-uncased", &detail::call<bert_base>},
    {"bert-large", Family::transformer, 128, "Hugging Face BertModel, bert-large-uncased", &detail::call<bert_large>},
    {"bert-swag", Family::transformer, 80, "Hugging Face BertForMultipleChoice, bert-base-uncased, 4 choices",
     &detail::call<bert_swag>},
    {"bert-squad", Family::transformer, 384, "Hugging Face BertForQuestionAnswering, bert-base-uncased",
     &detail::call<bert_squad>},
    {"gnmt", Family::rnn, 50, "NVIDIA/OpenSeq2Seq en-de-gnmt-like-4GPUs.py", &detail::call<gnmt>},
    {"gpt2", Family::transformer, 1024, "Hugging Face GPT2LMHeadModel, gpt2", &detail::call<gpt2>},
    {"llama2-7b", Family::transformer, 4096, "Hugging Face LlamaForCausalLM, meta-llama/Llama-2-7b-hf config",
     &detail::call<llama2_7b>},
    {"llama3-8b", Family::transformer, 8192, "Hugging Face LlamaForCausalLM, meta-llama/Meta-Llama-3-8B config",
     &detail::call<llama3_8b>},
}};

constexpr std::span<const ZooEntry> zoo() { return zoo_entries; }

/// The entry whose id matches (case-insensitive), or an error listing close matches and every id.
inline const ZooEntry& find_model(std::string_view id) {
    for (const ZooEntry& e : zoo_entries)
        if (roofplan::detail::iequals(e.id, id)) return e;
    std::array<std::string_view, zoo_entries.size()> ids{};
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = zoo_entries[i].id;
    std::string message = "unknown model '" + std::string(id) + "'";
    if (const std::string hint = did_you_mean(id, ids, 5, ", "); !hint.empty()) message += "; " + hint;
    message += " Known models:";
    for (std::string_view known : ids) {
        message += ' ';
        message += known;
    }
    throw Error(message, "model");
}

/// Builds a zoo model by id.  Example: `auto m = roofplan::models::build("bert-base", {.seq = 384});`
inline Model build(std::string_view id, const ModelOptions& options = {}) { return find_model(id).build(options); }

}  // namespace roofplan::models
