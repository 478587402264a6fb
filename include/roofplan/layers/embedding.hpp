// roofplan/layers/embedding.hpp — token/position embedding lookup tables.
// docs/extending.md shows this file as the example of a layer header (a test keeps the two identical).
#pragma once

#include <roofplan/layers/describe.hpp>
#include <roofplan/layers/detail_cost.hpp>
#include <roofplan/layers/explain.hpp>
#include <roofplan/shape.hpp>

namespace roofplan::layers {

/// A lookup table of `vocabulary` rows of `width`, gathered for `rows` tokens per instance.
/// params = vocabulary·width.  Forward reads only the gathered rows; backward scatters-adds into a dense
/// gradient of the whole table (PyTorch's default, sparse=False).
class Embedding {
public:
    struct Config {
        std::int64_t vocabulary = 0;
        std::int64_t width = 0;
        std::int64_t rows = 1;
        /// The same indices for every instance (position ids): the framework gathers them once per step and
        /// broadcasts the rows over the batch.  The counts here stay per instance; runtimes lower it as run.
        bool broadcast = false;
    };
    static constexpr std::string_view type_name = "embedding";

    constexpr explicit Embedding(const Config& config) : c_(config) {
        roofplan::detail::require_positive(c_.vocabulary, "embedding", "vocabulary");
        roofplan::detail::require_positive(c_.width, "embedding", "width");
        roofplan::detail::require_positive(c_.rows, "embedding", "rows");
        table_ = detail::mul(c_.vocabulary, c_.width, "embedding table");
        gathered_ = detail::mul(c_.rows, c_.width, "embedding rows");
    }
    [[nodiscard]] constexpr const Config& config() const { return c_; }
    [[nodiscard]] constexpr std::int64_t params() const { return table_; }
    [[nodiscard]] constexpr Shape input_shape() const { return Shape{c_.rows}; }
    [[nodiscard]] constexpr Shape output_shape() const { return Shape{c_.rows, c_.width}; }
    [[nodiscard]] constexpr std::int64_t paper_ops() const { return 0; }
    [[nodiscard]] constexpr PassCost forward(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        PassCost p;
        const std::int64_t n = detail::mul(batch, gathered_);
        p.weight_elements_read = n;
        p.activation_elements_written = n;
        return p;
    }
    /// Token ids have no gradient.
    [[nodiscard]] constexpr PassCost backward_data(std::int64_t batch) const { return detail::nothing(batch); }
    [[nodiscard]] constexpr PassCost backward_weight(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        PassCost p;
        const std::int64_t n = detail::mul(batch, gathered_);
        p.vector_flops = units::flops(n);
        p.activation_elements_read = n;
        p.gradient_elements_written = table_;
        return p;
    }

    /// In model files the input holds the token ids: rows is its element count.
    static constexpr auto describe() {
        return Description<Config, 4>{
            .types = {type_name},
            .fields = {field("vocab", "vocabulary", &Config::vocabulary, "table rows (tokens)").needed(),
                       field("d", "width", &Config::width, "embedding width").needed(),
                       field("rows", "seq", &Config::rows, "tokens per instance, default 1")
                           .from(Source::input_elements),
                       field("broadcast", "", &Config::broadcast, "same ids for every instance (positions), default 0")}};
    }

private:
    Config c_;
    std::int64_t table_ = 0;
    std::int64_t gathered_ = 0;
};

template <>
struct Explain<Embedding> {
    static void steps(Derivation& d, const Embedding& layer) {
        const Embedding::Config& c = layer.config();
        output_step(d, layer);
        d.section("parameters");
        d.checked("params", "params", "vocab·d", num(c.vocabulary) + "·" + num(c.width), c.vocabulary * c.width,
                  layer.params(), "", "the table");
        d.section("operations per instance");
        macs_step(d, layer);
        d.checked("gathered", "gathered", "rows·d", num(c.rows) + "·" + num(c.width), c.rows * c.width,
                  layer.forward(1).weight_elements_read, "elements",
                  "a lookup copies one table row per token: pure data movement");
        paper_ops_step(d, layer);
    }
};

}  // namespace roofplan::layers

namespace roofplan {
using layers::Embedding;
}  // namespace roofplan
