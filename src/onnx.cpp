// src/onnx.cpp — the ONNX importer behind include/roofplan/io/onnx.hpp (library roofplan::onnx): ONNX's protobuf
// types, its shape inference and the operator mapping stay in this file, so a consumer includes only the API.
#include <roofplan/io/onnx.hpp>

#include <roofplan/detail/suggest.hpp>
#include <roofplan/io/file.hpp>
#include <roofplan/model/model.hpp>

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace roofplan::io {

namespace onnx_detail {

using roofplan::detail::fail;
using Dims = std::vector<std::int64_t>;

/// Largest dimension accepted in a file (anything larger is taken for corruption).
inline constexpr std::int64_t max_dimension = std::int64_t{1} << 31;
inline constexpr std::size_t max_nodes = 1'000'000;

inline std::string dims_text(const Dims& d) {
    std::string s = "[";
    for (std::size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + (d[i] < 0 ? std::string("?") : std::to_string(d[i]));
    return s + "]";
}

inline bool contains_ci(std::string_view text, std::string_view word) {
    std::string a(text), b(word);
    for (char& c : a) c = roofplan::detail::lower(c);
    for (char& c : b) c = roofplan::detail::lower(c);
    return a.find(b) != std::string::npos;
}

/// "/layer1/layer1.0/conv1/Conv" → "layer1.0.conv1"; "/layer1/layer1.0/Add" → "layer1.0.add".
inline std::string layer_name(const onnx::NodeProto& node, std::size_t index) {
    std::string raw = node.name();
    if (raw.empty()) raw = node.output_size() > 0 ? node.output(0) : std::string();
    std::vector<std::string> parts;
    std::string part;
    for (char c : raw) {
        if (c == '/') {
            if (!part.empty()) parts.push_back(part);
            part.clear();
        } else {
            part += c;
        }
    }
    if (!part.empty()) parts.push_back(part);
    if (raw.find('/') == std::string::npos || parts.empty()) {
        std::string op = node.op_type();
        for (char& c : op) c = roofplan::detail::lower(c);
        return raw.empty() ? op + "_" + std::to_string(index) : raw;
    }
    // The last part is the operator ("Conv", "Relu_1"); it names the layer only when no module does.
    std::string op = parts.back();
    parts.pop_back();
    std::string name;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const bool prefix_of_next = i + 1 < parts.size() && parts[i + 1].rfind(parts[i] + ".", 0) == 0;
        if (prefix_of_next) continue;
        if (!name.empty()) name += '.';
        name += parts[i];
    }
    const bool module_op = node.op_type() == "Conv" || node.op_type() == "Gemm" || node.op_type() == "MatMul" ||
                           node.op_type() == "BatchNormalization" || node.op_type() == "LayerNormalization" ||
                           node.op_type() == "LSTM" || node.op_type() == "GRU" || node.op_type() == "ConvTranspose";
    if (name.empty() || !module_op) {
        for (char& c : op) c = roofplan::detail::lower(c);
        if (name.empty()) return op;
        // a module's own activation ("/relu/Relu") is named by the module; functional ops get the op name
        const std::string last = name.substr(name.rfind('.') == std::string::npos ? 0 : name.rfind('.') + 1);
        std::string op_base = op.substr(0, op.find('_'));
        if (contains_ci(last, op_base)) return name;
        return name + "." + op;
    }
    return name;
}

/// The whole ONNX import, step by step.
class Importer {
public:
    Importer(onnx::ModelProto proto, std::string file, OnnxOptions options)
        : proto_(std::move(proto)), file_(std::move(file)), o_(std::move(options)) {}

    OnnxImport run() {
        onnx::GraphProto& g = *proto_.mutable_graph();
        if (g.node_size() == 0) fail(file_, ": the ONNX graph has no nodes");
        if (static_cast<std::size_t>(g.node_size()) > max_nodes) fail(file_, ": more than 1,000,000 nodes");
        classify_inputs(g);
        resolve_dynamic_dims(g);
        sort_topologically(g);
        infer_shapes();
        // ONNX 1.12 propagates shape arithmetic only through a few operators; fold the rest (PyTorch's dynamic
        // axes compute Reshape targets with Gather/Div/Mul/...) and infer again until nothing changes.
        for (int round = 0; round < 8 && fold_shape_arithmetic(); ++round) infer_shapes();
        collect_shapes(proto_.graph());
        propagate_constants(proto_.graph());
        build(proto_.graph());
        return std::move(result_);
    }

private:
    // ---- inputs ----------------------------------------------------------------------------------------
    void classify_inputs(const onnx::GraphProto& g) {
        for (const auto& t : g.initializer()) initializers_.insert(t.name());
        for (const auto& t : g.sparse_initializer()) initializers_.insert(t.values().name());
        // Where each graph input is consumed, through Identity chains.
        std::unordered_map<std::string, std::vector<std::pair<std::string, int>>> uses;
        for (const auto& n : g.node())
            for (int i = 0; i < n.input_size(); ++i) uses[n.input(i)].emplace_back(n.op_type(), i);
        auto weight_slot = [](const std::string& op, int i) {
            if (op == "Conv" || op == "ConvTranspose" || op == "Gemm") return i >= 1;
            if (op == "BatchNormalization" || op == "LayerNormalization" || op == "InstanceNormalization") return i >= 1;
            if (op == "LSTM" || op == "GRU" || op == "RNN") return i >= 1 && i <= 3;
            if (op == "Gather") return i == 0;
            if (op == "MatMul") return i == 1;
            return false;
        };
        bool first = true;
        for (const auto& in : g.input()) {
            if (initializers_.count(in.name())) continue;
            if (!o_.data_inputs.empty()) {
                const bool data = std::find(o_.data_inputs.begin(), o_.data_inputs.end(), in.name()) != o_.data_inputs.end();
                (data ? data_inputs_ : param_inputs_).insert(in.name());
                continue;
            }
            bool as_weight = false, elsewhere = false;
            for (const auto& [op, slot] : uses[in.name()]) {
                if (weight_slot(op, slot)) as_weight = true;
                else if (op != "Add" && op != "Mul" && op != "Sub" && op != "Div" && op != "Identity") elsewhere = true;
            }
            bool dynamic = false;
            if (in.type().has_tensor_type() && in.type().tensor_type().has_shape())
                for (const auto& d : in.type().tensor_type().shape().dim()) dynamic = dynamic || !d.has_dim_value();
            const bool data = !as_weight && (first || dynamic || elsewhere);
            (data ? data_inputs_ : param_inputs_).insert(in.name());
            if (data) first = false;
        }
        for (const std::string& name : o_.data_inputs)
            if (!data_inputs_.count(name)) {
                std::string known;
                for (const auto& in : g.input()) known += " " + in.name();
                fail(file_, ": ", field_ref("input"), " '", name, "' is not a graph input; inputs:", known);
            }
        if (data_inputs_.empty()) fail(file_, ": the graph has no data input (every input is a parameter)");
    }

    void resolve_dynamic_dims(onnx::GraphProto& g) {
        for (auto& in : *g.mutable_input()) {
            if (!data_inputs_.count(in.name()) && !param_inputs_.count(in.name())) continue;
            const bool data = data_inputs_.count(in.name()) > 0;
            if (!in.type().has_tensor_type())
                fail(file_, ": input '", in.name(), "' is not a tensor (sequences and maps are not supported)");
            auto* tt = in.mutable_type()->mutable_tensor_type();
            if (!tt->has_shape())
                fail(file_, ": input '", in.name(), "' has no shape: the file must give the rank of every input");
            int axis = 0;
            for (auto& d : *tt->mutable_shape()->mutable_dim()) {
                if (d.has_dim_value() && d.dim_value() > 0) {
                    if (d.dim_value() > max_dimension)
                        fail(file_, ": input '", in.name(), "' dimension ", axis, " is ", d.dim_value(),
                             ", absurdly large (accepted: 1 to 2^31)");
                    ++axis;
                    continue;
                }
                if (d.has_dim_value() && d.dim_value() < 0)
                    fail(file_, ": input '", in.name(), "' dimension ", axis, " is negative (", d.dim_value(), ")");
                const std::string label = d.has_dim_param() ? d.dim_param() : std::string();
                if (!data)
                    fail(file_, ": parameter input '", in.name(), "' has a dynamic dimension ", axis,
                         label.empty() ? std::string() : " ('" + label + "')", "; parameters need fixed shapes");
                const bool batch = contains_ci(label, "batch") || (label.empty() && axis == 0) ||
                                   (axis == 0 && !contains_ci(label, "seq") && !contains_ci(label, "len") &&
                                    !contains_ci(label, "time") && !contains_ci(label, "token"));
                std::int64_t value = 1;
                if (batch) {
                    result_.notes.push_back("input '" + in.name() + "' dimension " + std::to_string(axis) +
                                            (label.empty() ? "" : " ('" + label + "')") +
                                            " is the batch: counted per instance");
                } else {
                    if (o_.seq <= 0)
                        fail(file_, ": input '", in.name(), "' dimension ", axis,
                             label.empty() ? std::string() : " ('" + label + "')",
                             " is dynamic: give its length with ", field_ref("seq"), " N");
                    if (o_.seq > max_dimension) fail(file_, ": ", field_ref("seq"), " ", o_.seq, " is absurdly large");
                    value = o_.seq;
                    result_.seq_used = true;
                    result_.notes.push_back("input '" + in.name() + "' dimension " + std::to_string(axis) +
                                            (label.empty() ? "" : " ('" + label + "')") + " = " +
                                            std::to_string(value) + " (the sequence length given)");
                }
                d.clear_dim_param();
                d.set_dim_value(value);
                ++axis;
            }
        }
    }

    // ---- graph order -----------------------------------------------------------------------------------
    void sort_topologically(onnx::GraphProto& g) {
        std::unordered_set<std::string> available(initializers_.begin(), initializers_.end());
        for (const auto& in : g.input()) available.insert(in.name());
        std::unordered_map<std::string, int> producer;
        for (int i = 0; i < g.node_size(); ++i)
            for (const auto& out : g.node(i).output()) {
                if (out.empty()) continue;
                if (available.count(out))
                    fail(file_, ": node '", g.node(i).name(), "' (", g.node(i).op_type(), ") writes '", out,
                         "', which is also a graph input or initializer");
                if (!producer.emplace(out, i).second)
                    fail(file_, ": tensor '", out, "' is written by two nodes ('", g.node(producer[out]).name(),
                         "' and '", g.node(i).name(), "')");
            }
        std::vector<int> pending(static_cast<std::size_t>(g.node_size()), 0);
        std::vector<std::vector<int>> consumers(static_cast<std::size_t>(g.node_size()));
        for (int i = 0; i < g.node_size(); ++i) {
            std::set<int> deps;
            for (const auto& in : g.node(i).input()) {
                if (in.empty() || available.count(in)) continue;
                const auto p = producer.find(in);
                if (p == producer.end())
                    fail(file_, ": node '", g.node(i).name(), "' (", g.node(i).op_type(), ") reads '", in,
                         "', which no node, graph input or initializer provides");
                deps.insert(p->second);
            }
            pending[static_cast<std::size_t>(i)] = static_cast<int>(deps.size());
            for (int d : deps) consumers[static_cast<std::size_t>(d)].push_back(i);
        }
        std::vector<int> order, ready;
        for (int i = g.node_size() - 1; i >= 0; --i)
            if (pending[static_cast<std::size_t>(i)] == 0) ready.push_back(i);
        while (!ready.empty()) {
            // lowest index first keeps the file's order when it is already valid
            const auto it = std::min_element(ready.begin(), ready.end());
            const int n = *it;
            ready.erase(it);
            order.push_back(n);
            for (int c : consumers[static_cast<std::size_t>(n)])
                if (--pending[static_cast<std::size_t>(c)] == 0) ready.push_back(c);
        }
        if (order.size() != static_cast<std::size_t>(g.node_size())) {
            std::string stuck;
            int shown = 0;
            for (int i = 0; i < g.node_size() && shown < 4; ++i)
                if (pending[static_cast<std::size_t>(i)] > 0) {
                    stuck += (shown++ ? ", '" : "'") + g.node(i).name() + "' (" + g.node(i).op_type() + ")";
                }
            fail(file_, ": the graph has a cycle; nodes on or behind it: ", stuck);
        }
        bool sorted = true;
        for (std::size_t i = 0; i < order.size(); ++i) sorted = sorted && order[i] == static_cast<int>(i);
        if (!sorted) {
            google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
            for (int i : order) *nodes.Add() = g.node(i);
            g.mutable_node()->Swap(&nodes);
        }
    }

    // ---- shapes ----------------------------------------------------------------------------------------
    /// A node's input and output counts within its schema's (ONNX's checker's rule; ONNX 1.12's inference
    /// functions read the inputs their schema promises without looking, so a Conv given seven inputs crashed
    /// inside ONNX: found by fuzzing, tests/fuzz/corpus/onnx/regression-conv-arity.onnx).
    void check_arity(const onnx::NodeProto& n, const onnx::OpSchema& schema) const {
        if (n.input_size() < schema.min_input() || n.input_size() > schema.max_input() ||
            n.output_size() < schema.min_output() || n.output_size() > schema.max_output())
            fail(file_, ": node '", n.name(), "' (", n.op_type(), ") has ", n.input_size(), " inputs and ",
                 n.output_size(), " outputs; its ONNX schema accepts ", schema.min_input(), " to ", schema.max_input(),
                 " inputs and ", schema.min_output(), " to ", schema.max_output(), " outputs");
    }

    /// Strides, dilations, kernels and groups must be positive and pads non-negative before ONNX sees them
    /// (ONNX 1.12's convolution and pooling inference divides by them).
    void check_geometry(const onnx::NodeProto& n) const {
        for (const auto& a : n.attribute()) {
            const std::string& name = a.name();
            const bool positive = name == "strides" || name == "dilations" || name == "kernel_shape" || name == "group";
            if (!positive && name != "pads") continue;
            const std::int64_t low = positive ? 1 : 0;
            if (a.ints_size() > 16) fail(file_, ": node '", n.name(), "' (", n.op_type(), "): ", name, " has too many values");
            for (std::int64_t v : a.ints())
                if (v < low || v > max_dimension)
                    fail(file_, ": node '", n.name(), "' (", n.op_type(), "): ", name, " value ", v, " is out of range (",
                         low, " to 2^31)");
            if (name == "group" && (a.i() < 1 || a.i() > max_dimension))
                fail(file_, ": node '", n.name(), "' (", n.op_type(), "): group ", a.i(), " must be >= 1");
        }
    }

    /// Runs ONNX shape inference on a copy of the graph that holds only nodes ONNX has a schema for (and
    /// nothing downstream of one it has not: ONNX 1.12's inference functions may dereference the missing
    /// types of such inputs), then takes the inferred shapes back.  Tensors behind an unknown operator are
    /// remembered in `cut_`; the nodes reading them are reported as unsupported.
    void infer_shapes() {
        std::int64_t opset = -1;
        for (const auto& o : proto_.opset_import())
            if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
        if (opset < 1 || opset > 1000) fail(file_, ": the model declares no usable ONNX opset (ai.onnx) version");
        onnx::ModelProto copy = proto_;
        onnx::GraphProto& g = *copy.mutable_graph();
        g.clear_value_info();
        for (auto& out : *g.mutable_output()) out.clear_type();
        cut_.clear();
        google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
        for (const auto& n : g.node()) {
            bool behind_unknown = false;
            for (const auto& in : n.input()) behind_unknown = behind_unknown || cut_.count(in) > 0;
            if (!behind_unknown && n.domain() == "com.microsoft" && n.op_type() == "Gelu" && n.input_size() == 1 &&
                n.output_size() == 1) {
                onnx::NodeProto* identity = kept.Add();  // elementwise: the output has the input's shape
                identity->set_op_type("Identity");
                identity->add_input(n.input(0));
                identity->add_output(n.output(0));
                continue;
            }
            const onnx::OpSchema* schema = n.domain().empty() || n.domain() == "ai.onnx"
                                               ? onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(opset), "")
                                               : nullptr;
            const bool known = schema != nullptr;
            if (known) check_arity(n, *schema);
            if (known) check_geometry(n);
            if (behind_unknown || !known || n.attribute_size() > 1000) {
                for (const auto& out : n.output()) cut_.insert(out);
                continue;
            }
            *kept.Add() = n;
        }
        g.mutable_node()->Swap(&kept);
        try {
            onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(),
                                               onnx::ShapeInferenceOptions(false, 0, false));
        } catch (const std::exception& e) {
            fail(file_, ": ONNX shape inference failed: ", e.what());
        }
        *proto_.mutable_graph()->mutable_value_info() = g.value_info();
        *proto_.mutable_graph()->mutable_output() = g.output();
    }

    /// A small integer tensor known at import time (shape arithmetic).
    struct IntTensor {
        Dims shape;
        std::vector<std::int64_t> values;
    };

    static std::optional<IntTensor> int_tensor(const onnx::TensorProto& t) {
        IntTensor out{Dims(t.dims().begin(), t.dims().end()), {}};
        std::int64_t elements = 1;
        for (std::int64_t d : out.shape) {
            if (d < 0 || d > 1024) return std::nullopt;
            elements *= d;  // at most 1024 × 1024: checked after every dimension (many dimensions overflowed)
            if (elements > 1024) return std::nullopt;
        }
        const auto n = static_cast<std::size_t>(elements);
        if (t.data_type() == onnx::TensorProto::INT64) {
            if (t.int64_data_size() == elements) out.values.assign(t.int64_data().begin(), t.int64_data().end());
            else if (t.raw_data().size() == n * 8) {
                out.values.resize(n);
                std::memcpy(out.values.data(), t.raw_data().data(), n * 8);
            } else return std::nullopt;
        } else if (t.data_type() == onnx::TensorProto::INT32) {
            if (t.int32_data_size() == elements) out.values.assign(t.int32_data().begin(), t.int32_data().end());
            else if (t.raw_data().size() == n * 4) {
                std::vector<std::int32_t> v(n);
                std::memcpy(v.data(), t.raw_data().data(), n * 4);
                out.values.assign(v.begin(), v.end());
            } else return std::nullopt;
        } else {
            return std::nullopt;
        }
        return out;
    }

    /// Integer tensors known at import time, by name.
    using KnownInts = std::unordered_map<std::string, IntTensor>;

    /// What evaluating one node of shape arithmetic gives: its value, or none (the node stays as it is); `stop`
    /// where the arithmetic would overflow, divide by zero or index out of range: folding ends for this round.
    struct Folded {
        std::optional<IntTensor> value;
        bool stop = false;
    };

    /// values[start:end] as a 1-D tensor, by ONNX's rule for Shape and Slice: a negative index counts from the end,
    /// and both are clamped to [0, size].
    static IntTensor slice_1d(const Dims& values, std::int64_t start, std::int64_t end) {
        const auto size = static_cast<std::int64_t>(values.size());
        const auto clamp = [size](std::int64_t i) { return std::clamp<std::int64_t>(i < 0 ? i + size : i, 0, size); };
        start = clamp(start);
        end = clamp(end);
        IntTensor t{{std::max<std::int64_t>(0, end - start)}, {}};
        for (std::int64_t i = start; i < end; ++i) t.values.push_back(values[static_cast<std::size_t>(i)]);
        return t;
    }

    /// The value of a Constant node's integer tensor, if it has one.
    static std::optional<IntTensor> constant_value(const onnx::NodeProto& n) {
        std::optional<IntTensor> value;
        for (const auto& a : n.attribute()) {
            if (a.name() == "value" && a.has_t()) value = int_tensor(a.t());
            if (a.name() == "value_int") value = IntTensor{{}, {a.i()}};
            if (a.name() == "value_ints") value = IntTensor{{a.ints_size()}, {a.ints().begin(), a.ints().end()}};
        }
        return value;
    }

    /// A Shape node's value (its start to end part), when its input's shape is fully known.
    std::optional<IntTensor> shape_value(const onnx::NodeProto& n) const {
        const auto it = shapes_.find(n.input(0));
        if (it == shapes_.end() || std::any_of(it->second.begin(), it->second.end(), [](std::int64_t d) { return d < 0; }))
            return std::nullopt;
        const auto rank = static_cast<std::int64_t>(it->second.size());
        return slice_1d(it->second, attr_int(n, "start", 0), attr_int(n, "end", rank));
    }

    /// The values of a node's inputs, when every one is known (an empty, optional input: null) and the first is given.
    static std::optional<std::vector<const IntTensor*>> known_inputs(const onnx::NodeProto& n, const KnownInts& known) {
        std::vector<const IntTensor*> in;
        bool all = n.input_size() > 0;
        for (const auto& name : n.input()) {
            const auto it = name.empty() ? known.end() : known.find(name);
            const IntTensor* v = it == known.end() ? nullptr : &it->second;
            all = all && (v != nullptr || name.empty());
            in.push_back(v);
        }
        if (!all || !in[0]) return std::nullopt;
        return in;
    }

    /// Gather along axis 0 of a 1-D tensor (PyTorch's `x.shape[i]`).
    Folded gather_value(const onnx::NodeProto& n, const std::vector<const IntTensor*>& in) const {
        if (in.size() != 2 || !in[1] || in[0]->shape.size() != 1 || attr_int(n, "axis", 0) != 0) return {};
        IntTensor t{in[1]->shape, {}};
        const auto size = static_cast<std::int64_t>(in[0]->values.size());
        for (std::int64_t i : in[1]->values) {
            if (i < -size || i >= size) return {.value = std::nullopt, .stop = true};
            t.values.push_back(in[0]->values[static_cast<std::size_t>(i < 0 ? i + size : i)]);
        }
        return {t};
    }

    /// Unsqueeze, Squeeze, an integer Cast or Identity: the same values, perhaps in another shape.
    std::optional<IntTensor> reshaped_value(const onnx::NodeProto& n, const std::vector<const IntTensor*>& in) const {
        const std::string& op = n.op_type();
        if (op == "Cast" && attr_int(n, "to", 0) != onnx::TensorProto::INT64 &&
            attr_int(n, "to", 0) != onnx::TensorProto::INT32)
            return std::nullopt;
        const auto count = static_cast<std::int64_t>(in[0]->values.size());
        if (op == "Unsqueeze") {
            if (in[0]->shape.empty()) return IntTensor{{1}, in[0]->values};
            if (in[0]->shape.size() == 1 && in.size() == 2 && in[1] && in[1]->values == std::vector<std::int64_t>{0})
                return IntTensor{{1, count}, in[0]->values};
            return std::nullopt;
        }
        if (op == "Squeeze") {
            if (count != 1) return std::nullopt;
            return IntTensor{{}, in[0]->values};
        }
        return *in[0];
    }

    /// Concat along axis 0 of scalars and 1-D tensors.
    std::optional<IntTensor> concat_value(const onnx::NodeProto& n, const std::vector<const IntTensor*>& in) const {
        if (attr_int(n, "axis", 0) != 0) return std::nullopt;
        IntTensor t{{0}, {}};
        bool ok = true;
        for (const IntTensor* v : in) {
            ok = ok && v && v->shape.size() <= 1;
            if (ok) t.values.insert(t.values.end(), v->values.begin(), v->values.end());
        }
        if (!ok) return std::nullopt;
        t.shape[0] = static_cast<std::int64_t>(t.values.size());
        return t;
    }

    /// Add, Sub, Mul or Div of two tensors of one size, or of a tensor and a one-element tensor.
    static Folded arithmetic_value(const std::string& op, const std::vector<const IntTensor*>& in) {
        if (in.size() != 2 || !in[1]) return {};
        const IntTensor& a = *in[0];
        const IntTensor& b = *in[1];
        if (a.values.size() != b.values.size() && a.values.size() != 1 && b.values.size() != 1) return {};
        IntTensor t{a.values.size() >= b.values.size() ? a.shape : b.shape, {}};
        const std::size_t count = std::max(a.values.size(), b.values.size());
        for (std::size_t i = 0; i < count; ++i) {
            const std::int64_t x = a.values[a.values.size() == 1 ? 0 : i];
            const std::int64_t y = b.values[b.values.size() == 1 ? 0 : i];
            if (std::max(std::abs(x), std::abs(y)) > max_dimension) return {.value = std::nullopt, .stop = true};
            if (op == "Div" && y == 0) return {.value = std::nullopt, .stop = true};
            t.values.push_back(op == "Add" ? x + y : op == "Sub" ? x - y : op == "Mul" ? x * y : x / y);
        }
        return {t};
    }

    /// Slice of a 1-D tensor with one start and one end (axis 0, step 1).
    static std::optional<IntTensor> slice_value(const std::vector<const IntTensor*>& in) {
        if (!(in.size() >= 3 && in[1] && in[2] && in[0]->shape.size() == 1 && in[1]->values.size() == 1 &&
              in[2]->values.size() == 1 && (in.size() < 4 || !in[3] || in[3]->values == std::vector<std::int64_t>{0}) &&
              (in.size() < 5 || !in[4] || in[4]->values == std::vector<std::int64_t>{1})))
            return std::nullopt;
        return slice_1d(in[0]->values, in[1]->values[0], in[2]->values[0]);
    }

    /// One node of shape arithmetic whose inputs are known (a Shape node aside).
    Folded fold_node(const onnx::NodeProto& n, const std::vector<const IntTensor*>& in) const {
        const std::string& op = n.op_type();
        if (op == "Gather") return gather_value(n, in);
        if (op == "Unsqueeze" || op == "Squeeze" || op == "Cast" || op == "Identity") return {reshaped_value(n, in)};
        if (op == "Concat") return {concat_value(n, in)};
        if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") return arithmetic_value(op, in);
        if (op == "Slice") return {slice_value(in)};
        return {};
    }

    /// Replaces a node by a Constant holding `value` (its name and output kept).
    static void replace_by_constant(onnx::NodeProto& n, const IntTensor& value) {
        const std::string output = n.output(0), name = n.name();
        n.Clear();
        n.set_op_type("Constant");
        n.set_name(name);
        n.add_output(output);
        auto* a = n.add_attribute();
        a->set_name("value");
        a->set_type(onnx::AttributeProto::TENSOR);
        auto* t = a->mutable_t();
        t->set_data_type(onnx::TensorProto::INT64);
        for (std::int64_t d : value.shape) t->add_dims(d);
        for (std::int64_t v : value.values) t->add_int64_data(v);
    }

    /// Evaluates integer shape arithmetic whose inputs are known and replaces those nodes by Constants.
    /// Returns whether anything was replaced.
    bool fold_shape_arithmetic() {
        onnx::GraphProto& g = *proto_.mutable_graph();
        shapes_.clear();
        collect_shapes(g);
        KnownInts known;
        for (const auto& t : g.initializer())
            if (auto v = int_tensor(t)) known[t.name()] = *v;
        bool changed = false;
        for (auto& n : *g.mutable_node()) {
            if (n.output_size() != 1) continue;
            if (n.op_type() == "Constant") {
                if (const auto constant = constant_value(n)) known[n.output(0)] = *constant;
                continue;
            }
            Folded folded;
            if (n.op_type() == "Shape" && n.input_size() == 1) folded.value = shape_value(n);
            else if (const auto in = known_inputs(n, known)) folded = fold_node(n, *in);
            if (folded.stop) return changed;
            if (!folded.value) continue;
            const IntTensor& value = *folded.value;
            std::int64_t elements = 1;
            for (std::int64_t d : value.shape) elements *= d;
            if (elements != static_cast<std::int64_t>(value.values.size())) continue;
            known[n.output(0)] = value;
            replace_by_constant(n, value);
            changed = true;
        }
        return changed;
    }

    void record(const std::string& name, const onnx::TypeProto& type) {
        if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return;
        Dims d;
        for (const auto& dim : type.tensor_type().shape().dim())
            d.push_back(dim.has_dim_value() && dim.dim_value() >= 0 ? dim.dim_value() : -1);
        shapes_[name] = d;
    }

    void collect_shapes(const onnx::GraphProto& g) {
        for (const auto& t : g.initializer()) shapes_[t.name()] = Dims(t.dims().begin(), t.dims().end());
        for (const auto& v : g.input()) record(v.name(), v.type());
        for (const auto& v : g.value_info()) record(v.name(), v.type());
        for (const auto& v : g.output()) record(v.name(), v.type());
        for (const auto& t : g.initializer())
            for (std::int64_t d : t.dims())
                if (d < 0 || d > max_dimension)
                    fail(file_, ": initializer '", t.name(), "' has dimension ", d, " (accepted: 0 to 2^31)");
    }

    /// Known shape of tensor `name`, or an error naming the node that needs it.
    const Dims& dims(const std::string& name, const onnx::NodeProto& node) const {
        const auto it = shapes_.find(name);
        if (it == shapes_.end() || std::any_of(it->second.begin(), it->second.end(), [](std::int64_t d) { return d < 0; }))
            fail(file_, ": the shape of '", name, "' (read or written by node '", node.name(), "', ", node.op_type(),
                 ") is unknown: the file lacks it and ONNX shape inference could not derive it",
                 it == shapes_.end() ? std::string() : " (got " + dims_text(it->second) + ")");
        for (std::int64_t d : it->second) {
            if (d > max_dimension)
                fail(file_, ": tensor '", name, "' (node '", node.name(), "') has dimension ", d,
                     ", absurdly large (accepted: 1 to 2^31)");
            if (d == 0) fail(file_, ": tensor '", name, "' (node '", node.name(), "') has a zero dimension");
        }
        return it->second;
    }

    /// A tensor's per-instance shape for a descriptor: the leading batch axis of size 1 dropped, leading
    /// axes merged down to rank 4.
    Shape instance(const std::string& name, const onnx::NodeProto& node) const {
        Dims d = dims(name, node);
        if (d.size() >= 2 && d.front() == 1) d.erase(d.begin());
        if (d.empty()) d.push_back(1);
        while (d.size() > static_cast<std::size_t>(Shape::max_rank)) {
            d[1] = roofplan::detail::mul(d[0], d[1], "tensor size");
            d.erase(d.begin());
        }
        switch (d.size()) {
            case 1: return Shape{d[0]};
            case 2: return Shape{d[0], d[1]};
            case 3: return Shape{d[0], d[1], d[2]};
            default: return Shape{d[0], d[1], d[2], d[3]};
        }
    }

    static std::int64_t product(const Dims& d, std::size_t from, std::size_t to) {
        std::int64_t p = 1;
        for (std::size_t i = from; i < to && i < d.size(); ++i) p = roofplan::detail::mul(p, d[i], "tensor size");
        return p;
    }

    // ---- constants -------------------------------------------------------------------------------------
    void propagate_constants(const onnx::GraphProto& g) {
        constant_.insert(initializers_.begin(), initializers_.end());
        constant_.insert(param_inputs_.begin(), param_inputs_.end());
        for (const auto& n : g.node()) {
            bool all_constant = true;
            for (const auto& in : n.input()) all_constant = all_constant && (in.empty() || constant_.count(in) > 0);
            const bool metadata = n.op_type() == "Shape" || n.op_type() == "Size";
            if (all_constant || metadata)
                for (const auto& out : n.output()) constant_.insert(out);
            for (const auto& in : n.input()) consumers_[in].push_back(&n);
            for (const auto& out : n.output()) producer_[out] = &n;
        }
        for (const auto& t : g.initializer()) initializer_tensors_[t.name()] = &t;
    }
    [[nodiscard]] bool is_constant(const std::string& name) const { return name.empty() || constant_.count(name) > 0; }

    /// The value of a constant scalar (an initializer or a Constant node's float tensor), if readable.
    [[nodiscard]] std::optional<double> scalar(const std::string& name) const {
        const onnx::TensorProto* t = nullptr;
        if (const auto it = initializer_tensors_.find(name); it != initializer_tensors_.end()) t = it->second;
        if (const auto p = producer_.find(name); !t && p != producer_.end() && p->second->op_type() == "Constant")
            for (const auto& a : p->second->attribute())
                if (a.name() == "value" && a.has_t()) t = &a.t();
        if (!t) return std::nullopt;
        std::int64_t elements = 1;
        for (std::int64_t d : t->dims()) elements *= d;
        if (elements != 1) return std::nullopt;
        if (t->data_type() == onnx::TensorProto::FLOAT) {
            if (t->float_data_size() == 1) return t->float_data(0);
            if (t->raw_data().size() == 4) {
                float f = 0;
                std::memcpy(&f, t->raw_data().data(), 4);
                return f;
            }
        }
        if (t->data_type() == onnx::TensorProto::DOUBLE) {
            if (t->double_data_size() == 1) return t->double_data(0);
            if (t->raw_data().size() == 8) {
                double f = 0;
                std::memcpy(&f, t->raw_data().data(), 8);
                return f;
            }
        }
        return std::nullopt;
    }

    [[nodiscard]] const onnx::NodeProto* sole_consumer(const std::string& tensor) const {
        const auto it = consumers_.find(tensor);
        if (it == consumers_.end() || it->second.size() != 1) return nullptr;
        for (const auto& out : proto_.graph().output())
            if (out.name() == tensor) return nullptr;
        return it->second.front();
    }
    [[nodiscard]] static std::string other_input(const onnx::NodeProto& n, const std::string& one) {
        if (n.input_size() != 2) return {};
        return n.input(0) == one ? n.input(1) : n.input(0);
    }

    // ---- attributes ------------------------------------------------------------------------------------
    static const onnx::AttributeProto* attr(const onnx::NodeProto& n, std::string_view name) {
        for (const auto& a : n.attribute())
            if (a.name() == name) return &a;
        return nullptr;
    }
    std::int64_t attr_int(const onnx::NodeProto& n, std::string_view name, std::int64_t fallback) const {
        const auto* a = attr(n, name);
        return a ? a->i() : fallback;
    }
    std::string attr_string(const onnx::NodeProto& n, std::string_view name, std::string fallback) const {
        const auto* a = attr(n, name);
        return a ? a->s() : fallback;
    }
    Dims attr_ints(const onnx::NodeProto& n, std::string_view name, Dims fallback) const {
        const auto* a = attr(n, name);
        if (!a) return fallback;
        Dims d(a->ints().begin(), a->ints().end());
        for (std::int64_t v : d)
            if (v < 0 || v > max_dimension)
                fail(file_, ": node '", n.name(), "' (", n.op_type(), ") attribute ", name, " has value ", v,
                     " (accepted: 0 to 2^31)");
        return d;
    }

    // ---- building --------------------------------------------------------------------------------------
    void unsupported(const onnx::NodeProto& n, std::string reason) {
        if (o_.strict)
            fail(file_, ": node '", n.name(), "' (", n.op_type(), ") is not supported: ", reason,
                 " (", field_ref("strict"), "; without it, unsupported operators are reported and left out)");
        for (auto& u : result_.unsupported)
            if (u.op_type == n.op_type() && u.reason == reason) {
                ++u.count;
                return;
            }
        result_.unsupported.push_back({n.op_type(), 1, n.name(), std::move(reason)});
    }

    template <Layer L>
    void add(const onnx::NodeProto& n, const L& layer, std::int64_t repeat = 1) {
        std::string name = layer_name(n, index_);
        if (gelu_input_.count(&n) && name.size() >= 3 && name.substr(name.size() - 3) == "erf")
            name.replace(name.size() - 3, 3, "gelu");
        if (name.size() > 60) name = name.substr(name.size() - 60);
        std::string unique = name;
        for (int k = 2; layer_names_.count(unique); ++k) unique = name + ":" + std::to_string(k);  // (hashed: linear time)
        bool from_input = true;
        for (const auto& in : n.input())
            if (!in.empty() && !is_constant(in) && !data_inputs_.count(in)) from_input = false;
        try {
            model_.add(LayerName(unique), layer, !from_input, repeat);
            layer_names_.insert(unique);
        } catch (const roofplan::invalid_argument& e) {
            fail(file_, ": node '", n.name(), "' (", n.op_type(), "): ", e.what());
        }
    }

    /// The data inputs of a node (non-constant, non-empty).
    std::vector<std::string> data_of(const onnx::NodeProto& n) const {
        std::vector<std::string> d;
        for (const auto& in : n.input())
            if (!is_constant(in)) d.push_back(in);
        return d;
    }

    void check_spatial(const onnx::NodeProto& n, const Shape& got, const Dims& onnx_out) {
        if (onnx_out.size() != 4 || got[1] != onnx_out[2] || got[2] != onnx_out[3])
            fail(file_, ": node '", n.name(), "' (", n.op_type(), "): roofplan computes an output of ", got.to_string(),
                 " but the graph says ", dims_text(onnx_out), "; the attributes are inconsistent");
    }

    bool symmetric_pads(const onnx::NodeProto& n, Dims& pads) {
        pads = attr_ints(n, "pads", {0, 0, 0, 0});
        const std::string auto_pad = attr_string(n, "auto_pad", "NOTSET");
        if (auto_pad != "NOTSET" && auto_pad != "VALID") {
            unsupported(n, "auto_pad " + auto_pad);
            return false;
        }
        if (pads.size() != 4) fail(file_, ": node '", n.name(), "' (", n.op_type(), "): pads must have 4 values for 2-D");
        if (pads[0] != pads[2] || pads[1] != pads[3]) {
            unsupported(n, "asymmetric padding");
            return false;
        }
        return true;
    }

    void conv(const onnx::NodeProto& n) {
        if (n.input_size() < 2 || !is_constant(n.input(1))) return unsupported(n, "weights computed from data");
        const Dims& x = dims(n.input(0), n);
        const Dims& w = dims(n.input(1), n);
        if (x.size() != 4 || w.size() != 4) return unsupported(n, "only 2-D convolution (NCHW) is supported");
        Dims pads;
        if (!symmetric_pads(n, pads)) return;
        const Dims strides = attr_ints(n, "strides", {1, 1});
        const Dims dil = attr_ints(n, "dilations", {1, 1});
        if (strides.size() != 2 || dil.size() != 2)
            fail(file_, ": node '", n.name(), "' (Conv): strides and dilations need 2 values");
        const std::int64_t groups = attr_int(n, "group", 1);
        if (w[1] * groups != x[1])
            fail(file_, ": node '", n.name(), "' (Conv): weight ", dims_text(w), " does not fit input ", dims_text(x),
                 " with group ", groups);
        const Conv2D layer{{.in_channels = x[1], .out_channels = w[0], .in_height = x[2], .in_width = x[3],
                            .kernel = Extent2{w[2], w[3]}, .stride = Extent2{strides[0], strides[1]},
                            .padding = Extent2{pads[0], pads[1]}, .dilation = Extent2{dil[0], dil[1]},
                            .groups = groups, .bias = n.input_size() > 2 && !n.input(2).empty()}};
        check_spatial(n, layer.output_shape(), dims(n.output(0), n));
        add(n, layer, x[0]);
    }

    /// ConvTranspose: weight [ci, co/group, kh, kw]; an output_shape attribute fixes the padding
    /// (total = stride·(H−1) + output_padding + dilation·(kh−1) + 1 − output), which must split evenly.
    void conv_transpose(const onnx::NodeProto& n) {
        if (n.input_size() < 2 || !is_constant(n.input(1))) return unsupported(n, "weights computed from data");
        const Dims& x = dims(n.input(0), n);
        const Dims& w = dims(n.input(1), n);
        if (x.size() != 4 || w.size() != 4)
            return unsupported(n, "only 2-D transposed convolution (NCHW) is supported");
        auto where = [&] { return file_ + ": node '" + n.name() + "' (ConvTranspose)"; };
        const Dims strides = attr_ints(n, "strides", {1, 1});
        const Dims dil = attr_ints(n, "dilations", {1, 1});
        const Dims out_pad = attr_ints(n, "output_padding", {0, 0});
        if (strides.size() != 2 || dil.size() != 2 || out_pad.size() != 2)
            fail(where(), ": strides, dilations and output_padding need 2 values");
        const Dims kernel = attr_ints(n, "kernel_shape", {w[2], w[3]});
        if (kernel != Dims{w[2], w[3]})
            fail(where(), ": kernel_shape ", dims_text(kernel), " does not match the weight ", dims_text(w));
        Dims pads;
        const Dims out_shape = attr_ints(n, "output_shape", {});
        if (!out_shape.empty()) {
            if (out_shape.size() != 2 && out_shape.size() != 4)
                fail(where(), ": output_shape ", dims_text(out_shape), " needs 2 values (height, width)");
            const std::size_t o = out_shape.size() - 2;
            pads.assign(4, 0);
            for (std::size_t i = 0; i < 2; ++i) {
                const std::int64_t full = roofplan::detail::mul(strides[i], x[2 + i] - 1, "ConvTranspose output") +
                                          out_pad[i] + roofplan::detail::mul(dil[i], w[2 + i] - 1, "ConvTranspose kernel") + 1;
                const std::int64_t total = full - out_shape[o + i];
                if (total < 0 || total % 2 != 0)
                    fail(where(), ": output_shape ", dims_text(out_shape), " implies a total padding of ", total,
                         " on axis ", static_cast<std::int64_t>(i), " (unpadded output ", full,
                         "); only an even, non-negative total (symmetric padding) is supported");
                pads[i] = pads[i + 2] = total / 2;
            }
        } else if (!symmetric_pads(n, pads)) {
            return;
        }
        const std::int64_t groups = attr_int(n, "group", 1);
        if (groups < 1 || w[0] != x[1])
            fail(where(), ": weight ", dims_text(w), " does not fit input ", dims_text(x), " with group ", groups,
                 " (the weight's first dimension must equal the input channels)");
        const ConvTranspose2D::Config config{
            .in_channels = x[1], .out_channels = roofplan::detail::mul(w[1], groups, "channels"), .in_height = x[2],
            .in_width = x[3], .kernel = Extent2{w[2], w[3]}, .stride = Extent2{strides[0], strides[1]},
            .padding = Extent2{pads[0], pads[1]}, .output_padding = Extent2{out_pad[0], out_pad[1]},
            .dilation = Extent2{dil[0], dil[1]}, .groups = groups, .bias = n.input_size() > 2 && !n.input(2).empty()};
        const ConvTranspose2D layer = [&] {
            try {
                return ConvTranspose2D{config};
            } catch (const roofplan::invalid_argument& e) {
                fail(where(), ": ", e.what());
            }
        }();
        check_spatial(n, layer.output_shape(), dims(n.output(0), n));
        add(n, layer, x[0]);
    }

    void pool(const onnx::NodeProto& n, PoolKind kind) {
        const Dims& x = dims(n.input(0), n);
        if (x.size() != 4) return unsupported(n, "only 2-D pooling (NCHW) is supported");
        Dims pads;
        if (!symmetric_pads(n, pads)) return;
        const Dims kernel = attr_ints(n, "kernel_shape", {});
        const Dims strides = attr_ints(n, "strides", {1, 1});
        if (kernel.size() != 2 || strides.size() != 2)
            fail(file_, ": node '", n.name(), "' (", n.op_type(), "): kernel_shape and strides need 2 values");
        const Dims dil = attr_ints(n, "dilations", {1, 1});
        if (dil != Dims{1, 1}) return unsupported(n, "dilated pooling");
        const Pool2D layer{{.kind = kind, .channels = x[1], .in_height = x[2], .in_width = x[3],
                            .kernel = Extent2{kernel[0], kernel[1]}, .stride = Extent2{strides[0], strides[1]},
                            .padding = Extent2{pads[0], pads[1]}, .ceil_mode = attr_int(n, "ceil_mode", 0) != 0}};
        check_spatial(n, layer.output_shape(), dims(n.output(0), n));
        add(n, layer, x[0]);
    }

    void global_pool(const onnx::NodeProto& n) {
        const Dims& x = dims(n.input(0), n);
        if (x.size() != 4) return unsupported(n, "only 2-D global pooling (NCHW) is supported");
        if (n.op_type() == "GlobalMaxPool")
            return add(n, Pool2D{{.kind = PoolKind::max, .channels = x[1], .in_height = x[2], .in_width = x[3],
                                  .kernel = Extent2{x[2], x[3]}}}, x[0]);
        add(n, AdaptiveAvgPool2D{{.channels = x[1], .in_height = x[2], .in_width = x[3], .output = 1}}, x[0]);
    }

    /// MatMul or Gemm with a constant right operand → Linear; a sole following Add of a [N] constant is its bias.
    void linear(const onnx::NodeProto& n, const Dims& a, std::int64_t in, std::int64_t out, bool bias) {
        std::int64_t rows = product(a, 0, a.size() - 1);
        if (a.size() == 1) rows = 1;
        const onnx::NodeProto* next = bias ? nullptr : sole_consumer(n.output(0));
        if (next && next->op_type() == "Add") {
            const std::string b = other_input(*next, n.output(0));
            const auto bs = shapes_.find(b);
            if (!b.empty() && is_constant(b) && bs != shapes_.end() && product(bs->second, 0, bs->second.size()) == out) {
                bias = true;
                absorbed_.insert(next);
                ++result_.fused;
            }
        }
        add(n, Linear{{.in_features = in, .out_features = out, .bias = bias, .rows = rows}});
    }

    void gemm(const onnx::NodeProto& n) {
        if (n.input_size() < 2) fail(file_, ": node '", n.name(), "' (Gemm) needs inputs A and B");
        const Dims& a = dims(n.input(0), n);
        const Dims& b = dims(n.input(1), n);
        if (a.size() != 2 || b.size() != 2) fail(file_, ": node '", n.name(), "' (Gemm): A and B must be matrices");
        const bool ta = attr_int(n, "transA", 0) != 0, tb = attr_int(n, "transB", 0) != 0;
        const std::int64_t m = ta ? a[1] : a[0], k = ta ? a[0] : a[1];
        const std::int64_t kb = tb ? b[1] : b[0], nn = tb ? b[0] : b[1];
        if (k != kb) fail(file_, ": node '", n.name(), "' (Gemm): A ", dims_text(a), " and B ", dims_text(b), " do not multiply");
        const bool bias = n.input_size() > 2 && !n.input(2).empty();
        if (is_constant(n.input(1))) return linear(n, Dims{m, k}, k, nn, bias);
        if (bias) return unsupported(n, "Gemm of two activations with a bias");
        add(n, MatMul{{.count = 1, .m = m, .k = k, .n = nn}});
    }

    void matmul(const onnx::NodeProto& n) {
        if (n.input_size() != 2) fail(file_, ": node '", n.name(), "' (MatMul) needs two inputs");
        Dims a = dims(n.input(0), n), b = dims(n.input(1), n);
        if (a.empty() || b.empty())
            fail(file_, ": node '", n.name(), "' (MatMul): operands must have rank >= 1, got ", dims_text(a), " and ",
                 dims_text(b));
        if (a.size() == 1) a.insert(a.begin(), 1);
        if (b.size() == 1) b.push_back(1);
        const std::int64_t k = a.back(), kb = b[b.size() - 2];
        if (k != kb) fail(file_, ": node '", n.name(), "' (MatMul): ", dims_text(a), " and ", dims_text(b), " do not multiply");
        if (is_constant(n.input(1)) && b.size() == 2) return linear(n, a, k, b.back(), false);
        if (is_constant(n.input(0)) && is_constant(n.input(1))) return;
        const Dims& out = dims(n.output(0), n);
        const std::int64_t count = out.size() >= 2 ? product(out, 0, out.size() - 2) : 1;
        add(n, MatMul{{.count = count, .m = a[a.size() - 2], .k = k, .n = b.back()}});
    }

    void batchnorm(const onnx::NodeProto& n) {
        const Dims& x = dims(n.input(0), n);
        if (x.size() < 2 || x.size() > 4) return unsupported(n, "BatchNormalization input of rank " + std::to_string(x.size()));
        const std::int64_t h = x.size() > 2 ? x[2] : 1, w = x.size() > 3 ? x[3] : 1;
        add(n, BatchNorm2d{{.channels = x[1], .height = h, .width = w}}, x[0]);
    }

    void layernorm(const onnx::NodeProto& n) {
        const Dims& x = dims(n.input(0), n);
        std::int64_t axis = attr_int(n, "axis", -1);
        const auto rank = static_cast<std::int64_t>(x.size());
        if (axis < 0) axis += rank;
        if (axis < 0 || axis >= rank) fail(file_, ": node '", n.name(), "' (LayerNormalization): axis out of range");
        const auto split = static_cast<std::size_t>(axis);
        add(n, LayerNorm{{.width = product(x, split, x.size()), .rows = product(x, 0, split),
                          .affine = n.input_size() > 1 && !n.input(1).empty()}});
    }

    /// LSTM (4 gates) or GRU (3 gates): X [seq, batch, in] (layout 1: [batch, seq, in]), W [dirs, gates·h, in].
    void recurrent(const onnx::NodeProto& n, std::int64_t gates) {
        if (n.input_size() < 3) fail(file_, ": node '", n.name(), "' (", n.op_type(), ") needs inputs X, W and R");
        const Dims& x = dims(n.input(0), n);
        const Dims& w = dims(n.input(1), n);
        if (x.size() != 3 || w.size() != 3) fail(file_, ": node '", n.name(), "' (", n.op_type(), "): X and W must have rank 3");
        const bool batch_major = attr_int(n, "layout", 0) != 0;
        const std::int64_t seq = batch_major ? x[1] : x[0], batch = batch_major ? x[0] : x[1];
        const std::string direction = attr_string(n, "direction", "forward");
        const std::int64_t hidden = attr_int(n, "hidden_size", w[1] / gates);
        if (hidden < 1 || w[1] != gates * hidden || w[2] != x[2])
            fail(file_, ": node '", n.name(), "' (", n.op_type(), "): W ", dims_text(w), " does not match hidden_size ",
                 hidden, " and input ", dims_text(x));
        if (w[0] != (direction == "bidirectional" ? 2 : 1))
            fail(file_, ": node '", n.name(), "' (", n.op_type(), "): W has ", w[0], " directions but direction is ",
                 direction);
        const bool bias = n.input_size() > 3 && !n.input(3).empty();
        if (gates == 3)
            return add(n, GRU{{.input_size = x[2], .hidden_size = hidden, .seq_len = seq, .num_layers = 1,
                               .bidirectional = direction == "bidirectional", .bias_vectors = bias ? 2 : 0}},
                       batch);
        add(n, LSTM{{.input_size = x[2], .hidden_size = hidden, .seq_len = seq, .num_layers = 1,
                     .bidirectional = direction == "bidirectional", .bias_vectors = bias ? 2 : 0}},
            batch);
    }

    void activation(const onnx::NodeProto& n) {
        const std::string& op = n.op_type();
        const ActivationKind kind = op == "Relu" ? ActivationKind::relu : op == "Sigmoid" ? ActivationKind::sigmoid
                                    : op == "Tanh" ? ActivationKind::tanh : ActivationKind::gelu;
        add(n, Activation{{.kind = kind, .shape = instance(n.output(0), n)}});
    }

    /// The ratio: an attribute before opset 12, an optional input from it on; 0.5 (ONNX's default) when absent.
    void dropout(const onnx::NodeProto& n) {
        double ratio = 0.5;
        if (const auto* a = attr(n, "ratio")) ratio = static_cast<double>(a->f());
        if (n.input_size() > 1 && !n.input(1).empty())
            if (const auto v = scalar(n.input(1))) ratio = *v;
        if (!(ratio >= 0.0 && ratio < 1.0))
            fail(file_, ": node '", n.name(), "' (Dropout): ratio ", std::to_string(ratio), " is outside [0, 1)");
        add(n, Dropout{{.shape = instance(n.output(0), n), .probability = ratio}});
    }

    void concat(const onnx::NodeProto& n) {
        if (n.input_size() < 2) {
            ++result_.views;
            return;
        }
        add(n, Concat{{.output = instance(n.output(0), n), .inputs = n.input_size()}});
    }

    /// Gather from a constant [vocabulary, width] table by data indices is an embedding lookup.
    void gather(const onnx::NodeProto& n) {
        if (n.input_size() != 2) fail(file_, ": node '", n.name(), "' (Gather) needs data and indices");
        if (is_constant(n.input(0)) && !is_constant(n.input(1))) {
            const Dims& table = dims(n.input(0), n);
            if (table.size() != 2 || attr_int(n, "axis", 0) != 0)
                return unsupported(n, "Gather from a constant that is not a [vocabulary, width] table");
            return add(n, Embedding{{.vocabulary = table[0], .width = table[1],
                                     .rows = product(dims(n.input(1), n), 0, dims(n.input(1), n).size())}});
        }
        ++result_.views;  // selecting from an activation (a token, a time step): a view
    }

    /// x·½·(1 + erf(x/√2)) spelled as Div → Erf → Add → Mul → Mul (PyTorch's export of GELU before opset 20).
    void find_erf_gelu(const onnx::NodeProto& erf) {
        const auto p = producer_.find(erf.input(0));
        if (p == producer_.end()) return;
        const onnx::NodeProto& scale = *p->second;
        if ((scale.op_type() != "Div" && scale.op_type() != "Mul") || scale.input_size() != 2) return;
        const std::string x = scale.input(0);
        if (is_constant(x) || !is_constant(scale.input(1)) || sole_consumer(scale.output(0)) != &erf) return;
        if (const auto c = scalar(scale.input(1))) {
            const double v = scale.op_type() == "Div" ? *c : 1.0 / *c;
            if (std::fabs(v - std::sqrt(2.0)) > 1e-3) return;
        }
        const onnx::NodeProto* add1 = sole_consumer(erf.output(0));
        if (!add1 || add1->op_type() != "Add" || !is_constant(other_input(*add1, erf.output(0)))) return;
        std::vector<const onnx::NodeProto*> chain{&scale, add1};
        std::string tail = add1->output(0);
        bool uses_x = false;
        for (int step = 0; step < 2; ++step) {
            const onnx::NodeProto* mul = sole_consumer(tail);
            if (!mul || mul->op_type() != "Mul") break;
            const std::string other = other_input(*mul, tail);
            if (other == x) uses_x = true;
            else if (!is_constant(other)) break;
            chain.push_back(mul);
            tail = mul->output(0);
        }
        if (!uses_x) return;
        for (const auto* c : chain) absorbed_.insert(c);
        result_.fused += static_cast<std::int64_t>(chain.size());
        gelu_input_[&erf] = x;
    }

    /// An Erf counts only as the GELU that find_erf_gelu found around it.
    void gelu_erf(const onnx::NodeProto& n) {
        if (const auto it = gelu_input_.find(&n); it != gelu_input_.end())
            return add(n, Activation{{.kind = ActivationKind::gelu, .shape = instance(it->second, n)}});
        unsupported(n, "Erf outside the GELU pattern x*0.5*(1+erf(x/sqrt(2)))");
    }

    void build(const onnx::GraphProto& g) {
        std::string first_input;
        for (const auto& in : g.input())
            if (data_inputs_.count(in.name())) {
                first_input = in.name();
                break;
            }
        const onnx::NodeProto* any = &g.node(0);
        std::string id = o_.id;
        if (id.empty()) {
            id = file_.substr(file_.find_last_of('/') == std::string::npos ? 0 : file_.find_last_of('/') + 1);
            if (id.size() > 5 && id.substr(id.size() - 5) == ".onnx") id.resize(id.size() - 5);
        }
        if (id.size() > 31) id.resize(31);
        if (id.empty()) id = "onnx";
        std::string description = "imported from " + file_;
        if (!g.name().empty()) description += " (graph '" + g.name() + "')";
        if (description.size() > 255) description.resize(255);
        model_ = Model(id, description, instance(first_input, *any));
        model_.reserve(static_cast<std::size_t>(g.node_size()));
        {
            std::string inputs;
            for (const auto& in : data_inputs_) inputs += " '" + in + "'";
            result_.notes.push_back("data inputs:" + inputs);
        }
        for (const auto& n : g.node())
            if (n.op_type() == "Erf" && n.input_size() == 1 && n.output_size() == 1 && !is_constant(n.input(0)))
                find_erf_gelu(n);
        index_ = 0;
        for (const auto& n : g.node()) {
            ++index_;
            if (absorbed_.count(&n)) continue;
            if (data_of(n).empty()) {
                ++result_.constant_nodes;
                continue;
            }
            map(n);
        }
        if (model_.size() == 0)
            fail(file_, ": no node of the graph maps to a layer (", static_cast<std::int64_t>(result_.unsupported.size()),
                 " unsupported operator types); nothing to count");
        result_.model = std::move(model_);
    }

    void map(const onnx::NodeProto& n) {
        const std::string& op = n.op_type();
        const std::string& domain = n.domain();
        for (const auto& in : n.input())
            if (cut_.count(in)) {
                if (producer_.count(in)) {
                    const onnx::NodeProto& up = *producer_.at(in);
                    return unsupported(n, "its input comes from '" + up.name() + "' (" + up.op_type() +
                                              "), whose output shape ONNX cannot infer");
                }
            }
        if (!domain.empty() && domain != "ai.onnx" && !(domain == "com.microsoft" && op == "Gelu"))
            return unsupported(n, "operator of domain '" + domain + "'");
        if (n.output_size() == 0) fail(file_, ": node '", n.name(), "' (", op, ") has no output");
        auto out_shape = [&] { return instance(n.output(0), n); };
        if (op == "Conv") return conv(n);
        if (op == "ConvTranspose") return conv_transpose(n);
        if (op == "Gemm") return gemm(n);
        if (op == "MatMul") return matmul(n);
        if (op == "BatchNormalization") return batchnorm(n);
        if (op == "LayerNormalization") return layernorm(n);
        if (op == "LSTM") return recurrent(n, 4);
        if (op == "GRU") return recurrent(n, 3);
        if (op == "MaxPool") return pool(n, PoolKind::max);
        if (op == "AveragePool") return pool(n, PoolKind::average);
        if (op == "GlobalAveragePool" || op == "GlobalMaxPool") return global_pool(n);
        if (op == "Relu" || op == "Sigmoid" || op == "Tanh" || op == "Gelu") return activation(n);
        if (op == "Erf") return gelu_erf(n);
        if (op == "Softmax" || op == "LogSoftmax") return add(n, Softmax{{.shape = out_shape()}});
        if (op == "Dropout") return dropout(n);
        if (op == "Add" || op == "Sub" || op == "Sum") {
            const auto inputs = std::max<std::int64_t>(2, n.input_size());
            return add(n, Add{{.shape = out_shape(), .inputs = inputs}});
        }
        if (op == "Mul" || op == "Div") return add(n, Multiply{{.shape = out_shape()}});
        if (op == "Concat") return concat(n);
        if (op == "Flatten") return add(n, Flatten{{.shape = instance(n.input(0), n)}});
        if (op == "Gather") return gather(n);
        static const std::set<std::string, std::less<>> views{
            "Identity", "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Slice", "Split", "Expand", "Cast",
            "Shape", "Size", "Constant", "ConstantOfShape"};
        if (views.count(op)) {
            ++result_.views;
            return;
        }
        unsupported(n, "no roofplan layer for this operator");
    }

    onnx::ModelProto proto_;
    std::string file_;
    OnnxOptions o_;
    OnnxImport result_;
    Model model_;
    std::unordered_set<std::string> layer_names_;  ///< the names model_ holds (Model::find is a linear search)
    std::size_t index_ = 0;
    std::set<std::string> initializers_, data_inputs_, param_inputs_;
    std::unordered_set<std::string> constant_;
    std::unordered_map<std::string, Dims> shapes_;
    std::unordered_map<std::string, std::vector<const onnx::NodeProto*>> consumers_;
    std::unordered_map<std::string, const onnx::NodeProto*> producer_;
    std::unordered_map<std::string, const onnx::TensorProto*> initializer_tensors_;
    std::unordered_set<const onnx::NodeProto*> absorbed_;
    std::unordered_set<std::string> cut_;  ///< tensors behind an operator ONNX has no schema for
    std::unordered_map<const onnx::NodeProto*, std::string> gelu_input_;  ///< Erf node of a GELU → its input x
};

}  // namespace onnx_detail

OnnxImport import_onnx_bytes(std::string_view bytes, const std::string& file, const OnnxOptions& options) {
    using roofplan::detail::fail;
    if (bytes.empty()) fail(file, ": empty file, not an ONNX model");
    if (bytes.size() > (std::size_t{1} << 31) - 1) fail(file, ": larger than 2 GiB (protobuf's limit)");
    if (bytes.front() == '{' || bytes.front() == '[')
        fail(file, ": looks like JSON, not an ONNX model (use a roofplan-model/1 .json file as ", field_ref("model_file"),
             " net.json)");
    onnx::ModelProto proto;
    if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
        fail(file, ": not a valid ONNX model (protobuf parse failed: truncated or not an ONNX file)");
    if (proto.ir_version() <= 0 || !proto.has_graph())
        fail(file, ": not an ONNX model (no IR version or no graph: wrong file type?)");
    if (proto.opset_import_size() == 0) fail(file, ": the ONNX model declares no opset");
    return onnx_detail::Importer(std::move(proto), file, options).run();
}

OnnxImport import_onnx(const std::string& file, const OnnxOptions& options) {
    return import_onnx_bytes(read_text(file, ReadLimits::max_onnx_bytes), file, options);
}

}  // namespace roofplan::io
