"""Any PyTorch module as a roofplan model: the module's graph is captured with torch.fx (Hugging Face models with
transformers' own fx tracer), every tensor's shape is propagated with the example inputs, and each operation that
computes is mapped to roofplan's layers (docs/python.md).  Operations written in the model's code — functional
activations, additions, matrix products, scaled-dot-product attention — are layers too, so what eager PyTorch
launches is what roofplan counts.  Views (reshape, permute, transpose, indexing) cost nothing and are skipped;
anything else is reported (type, count, first occurrence), or raised with ``strict=True``.

Shapes are per instance: the first axis of every tensor is the batch.
"""
import operator
from collections import OrderedDict

# Operations that only view or reshape (no kernel of their own in roofplan's counting).
_VIEWS = {"view", "reshape", "permute", "transpose", "contiguous", "size", "dim", "unsqueeze", "squeeze", "expand",
          "expand_as", "flatten_view", "chunk", "split", "t", "type_as", "to", "float", "half", "bfloat16", "detach",
          "clone", "getitem", "getattr", "narrow", "unbind", "repeat_interleave_view", "masked_fill_view",
          "new_ones", "new_zeros", "ones", "zeros", "arange", "full", "finfo", "tensor"}
_ACTIVATIONS = {"relu": "relu", "relu_": "relu", "gelu": "gelu", "tanh": "tanh", "sigmoid": "sigmoid", "silu": "silu",
                "softmax": "softmax", "dropout": "dropout", "flatten": "flatten", "layer_norm": "layernorm"}


class _Unsupported:
    def __init__(self):
        self.counts = OrderedDict()

    def add(self, kind, where, why):
        entry = self.counts.setdefault(kind, {"type": kind, "count": 0, "first": where, "reason": why})
        entry["count"] += 1

    def report(self):
        return list(self.counts.values())


def _name_of(target):
    if isinstance(target, str):
        return target
    return getattr(target, "__name__", str(target))


def _extent(v):
    """An extent (kernel, stride, padding, ...) as roofplan-model/1 takes it: an int or [height, width]."""
    if isinstance(v, (tuple, list)):
        v = [int(x) for x in v]
        return v[0] if len(v) == 2 and v[0] == v[1] else v
    return int(v)


def _meta(node):
    m = node.meta.get("tensor_meta", node.meta.get("val"))  # torch.fx's ShapeProp, or torch.export's value
    if m is None or hasattr(m, "shape"):
        return m
    if isinstance(m, (tuple, list)):  # a node with several outputs: its first tensor's
        return next((x for x in m if hasattr(x, "shape")), None)
    return None


def _instance(shape):
    return [int(d) for d in shape[1:]]


class _Builder:
    def __init__(self, root, strict):
        import torch.nn as nn

        self.nn = nn
        self.root = root
        self.strict = strict
        self.layers = []
        self.names = {}
        self.unsupported = _Unsupported()
        self.causal = None  # from_torch's causal=: what an attention mask tensor is (None: a general mask)
        self.weights = {}  # id(parameter) -> the layer that owns it (tied weights)

    # --- helpers ---------------------------------------------------------------------------------------------
    def unique(self, name):
        name = name.replace("/", ".")
        n = self.names.get(name, 0) + 1
        self.names[name] = n
        unique = name if n == 1 else f"{name}:{n}"
        return unique[-63:]

    def add(self, node, type_, fields, source=None):
        source = source if source is not None else self.first_tensor(node)
        meta = _meta(source) if source is not None else None
        if meta is None:
            self.skip(node, type_, "no tensor input shape")
            return
        layer = {"name": self.unique(node.target if node.op == "call_module" else node.name), "type": type_,
                 "input": _instance(meta.shape)}
        layer.update(fields)
        if source.op == "placeholder":
            layer["needs_input_gradient"] = False
        self.layers.append(layer)

    def first_tensor(self, node):
        for a in node.args:
            if hasattr(a, "op") and _meta(a) is not None:
                return a
        return None

    def tensors(self, node):
        return [a for a in node.args if hasattr(a, "op") and _meta(a) is not None]

    def skip(self, node, kind, why):
        where = node.target if node.op == "call_module" else node.name
        if self.strict:
            raise ValueError(f"from_torch: {kind} at '{where}' is not supported ({why}); strict=False reports it "
                             "and leaves it out")
        self.unsupported.add(kind, str(where), why)

    # --- modules -------------------------------------------------------------------------------------------
    def module(self, node):
        nn = self.nn
        m = self.root.get_submodule(node.target)
        kind = type(m).__name__
        if isinstance(m, nn.Conv2d):
            if isinstance(m.padding, str):
                return self.skip(node, kind, f"padding='{m.padding}'")
            fields = {"out_channels": m.out_channels, "kernel": _extent(m.kernel_size), "stride": _extent(m.stride),
                      "padding": _extent(m.padding), "dilation": _extent(m.dilation), "groups": m.groups,
                      "bias": m.bias is not None}
            return self.add(node, "conv2d", fields)
        if isinstance(m, nn.ConvTranspose2d):
            fields = {"out_channels": m.out_channels, "kernel": _extent(m.kernel_size), "stride": _extent(m.stride),
                      "padding": _extent(m.padding), "output_padding": _extent(m.output_padding),
                      "dilation": _extent(m.dilation), "groups": m.groups, "bias": m.bias is not None}
            return self.add(node, "conv_transpose2d", fields)
        if isinstance(m, nn.Linear):
            tied = id(m.weight) in self.weights
            self.weights.setdefault(id(m.weight), node.target)
            return self.add(node, "linear", {"out_features": m.out_features, "bias": m.bias is not None,
                                             "tied": tied})
        if isinstance(m, nn.Embedding):
            tied = id(m.weight) in self.weights
            if tied:
                return self.skip(node, kind, "an embedding that shares another layer's weight")
            self.weights.setdefault(id(m.weight), node.target)
            return self.add(node, "embedding", {"vocabulary": m.num_embeddings, "width": m.embedding_dim})
        if isinstance(m, nn.BatchNorm2d):
            return self.add(node, "batchnorm2d", {"affine": bool(m.affine)})
        if isinstance(m, nn.LayerNorm):
            if len(m.normalized_shape) != 1:
                return self.skip(node, kind, "normalization over more than the last axis")
            return self.add(node, "layernorm", {"affine": bool(m.elementwise_affine)})
        if isinstance(m, nn.LocalResponseNorm):
            return self.add(node, "lrn", {"size": m.size})
        simple = {nn.ReLU: "relu", nn.Tanh: "tanh", nn.Sigmoid: "sigmoid", nn.SiLU: "silu", nn.Flatten: "flatten"}
        for cls, type_ in simple.items():
            if isinstance(m, cls):
                return self.add(node, type_, {})
        if isinstance(m, nn.GELU):
            return self.add(node, "gelu", {})
        if isinstance(m, nn.Softmax):
            return self.add(node, "softmax", {})
        if isinstance(m, nn.Dropout):
            return self.add(node, "dropout", {"probability": float(m.p)})
        if isinstance(m, (nn.MaxPool2d, nn.AvgPool2d)):
            if getattr(m, "dilation", 1) not in (1, (1, 1)):
                return self.skip(node, kind, "dilated pooling")
            fields = {"kernel": _extent(m.kernel_size), "stride": _extent(m.stride or m.kernel_size),
                      "padding": _extent(m.padding), "ceil_mode": bool(m.ceil_mode)}
            return self.add(node, "maxpool2d" if isinstance(m, nn.MaxPool2d) else "avgpool2d", fields)
        if isinstance(m, nn.AdaptiveAvgPool2d):
            return self.add(node, "adaptive_avgpool2d", {"output": _extent(m.output_size)})
        if isinstance(m, nn.Identity):
            return None
        return self.skip(node, kind, "no roofplan layer for this module")

    # --- functions and methods -------------------------------------------------------------------------------
    def function(self, node):
        name = _name_of(node.target)
        if name in _VIEWS or node.target in (getattr, operator.getitem):
            return None
        tensors = self.tensors(node)
        if name in ("add", "iadd", "add_", "sub", "mul", "imul", "mul_"):
            if len(tensors) == 2:
                return self.add(node, "multiply" if name.startswith(("mul", "imul")) else "add", {})
            return self.skip(node, f"{name} with a scalar", "arithmetic with a constant has no roofplan layer")
        if name in ("cat", "concat"):
            inputs = node.args[0] if node.args else []
            out = _meta(node)
            return self.add(node, "concat", {"output": _instance(out.shape), "inputs": len(inputs)},
                            source=inputs[0] if inputs else None)
        if name in ("matmul", "bmm", "mm"):
            return self.matmul(node, tensors)
        if name == "scaled_dot_product_attention":
            return self.attention(node, tensors)
        if name in ("linear",) and len(node.args) >= 2:
            return self.skip(node, "functional linear", "a weight outside a module (use nn.Linear)")
        if name in _ACTIVATIONS:
            fields = {}
            if name == "dropout":
                p = node.kwargs.get("p", node.args[1] if len(node.args) > 1 else 0.5)
                if not node.kwargs.get("training", True):
                    return None
                fields = {"probability": float(p)}
            if name == "gelu" and node.kwargs.get("approximate", "none") == "tanh":
                fields = {}
            return self.add(node, _ACTIVATIONS[name], fields)
        if name in ("adaptive_avg_pool2d",):
            return self.add(node, "adaptive_avgpool2d", {"output": _extent(node.args[1])})
        return self.skip(node, name, "no roofplan layer for this operation")

    def matmul(self, node, tensors):
        if len(tensors) != 2:
            return self.skip(node, "matmul with a parameter", "a weight outside a module (use nn.Linear)")
        a, b = (_meta(t).shape for t in tensors)
        if len(a) < 3 or len(b) < 3 or list(a[:-2]) != list(b[:-2]):
            return self.skip(node, "matmul", f"operands {list(a)} and {list(b)}: batched products of equal "
                                             "leading axes only")
        count = 1
        for d in a[1:-2]:
            count *= int(d)
        return self.add(node, "matmul", {"count": count, "m": int(a[-2]), "k": int(a[-1]), "n": int(b[-1])})

    def attention(self, node, tensors):
        if len(tensors) < 3:
            return self.skip(node, "scaled_dot_product_attention", "query, key and value must be tensors")
        q, k, v = (_meta(t).shape for t in tensors[:3])
        count = 1
        for d in q[1:-2]:
            count *= int(d)
        base = self.label(node)
        # A causal mask given as is_causal (not as a mask tensor): the fused kernels compute only the pairs it keeps.
        causal = bool(node.kwargs.get("is_causal", node.args[5] if len(node.args) > 5 else False))
        mask = node.kwargs.get("attn_mask", node.args[3] if len(node.args) > 3 else None)
        causal = causal and mask is None
        if self.causal is not None and mask is not None:  # the caller says what the mask is (from_torch's causal=)
            causal = self.causal
        self.layers.append({"name": self.unique(base + ".scores"), "type": "matmul", "input": _instance(q),
                            "count": count, "m": int(q[-2]), "k": int(q[-1]), "n": int(k[-2]),
                            "causal": 1 if causal else 0})
        self.layers.append({"name": self.unique(base + ".softmax"), "type": "softmax",
                            "input": [count, int(q[-2]), int(k[-2])]})
        p = node.kwargs.get("dropout_p", node.args[4] if len(node.args) > 4 else 0.0)
        if p:
            self.layers.append({"name": self.unique(base + ".dropout"), "type": "dropout",
                                "input": [count, int(q[-2]), int(k[-2])], "probability": float(p)})
        self.layers.append({"name": self.unique(base + ".context"), "type": "matmul",
                            "input": [count, int(q[-2]), int(k[-2])], "count": count, "m": int(q[-2]),
                            "k": int(k[-2]), "n": int(v[-1]), "causal": 2 if causal else 0})
        return None

    def label(self, node):
        """The name of a layer made from a function call: the call's node name."""
        return node.name


# --- torch.export: modules torch.fx cannot trace (Hugging Face models under recent transformers) -------------------

_EXPORT_VIEWS = {"view", "_unsafe_view", "reshape", "permute", "transpose", "t", "expand", "slice", "select",
                 "unsqueeze", "squeeze", "contiguous", "clone", "_to_copy", "to", "alias", "detach", "lift_fresh_copy",
                 "arange", "full", "zeros", "ones", "scalar_tensor", "sym_size", "split", "split_with_sizes", "chunk",
                 "unbind", "getitem", "empty", "new_ones", "new_zeros", "_assert_tensor_metadata", "dropout",
                 "native_dropout", "sym_constrain_range_for_size", "_assert_scalar", "copy", "lift_fresh",
                 "flatten", "unflatten", "as_strided", "index_select_view"}


class _ExportBuilder(_Builder):
    """Maps a torch.export graph (ATen operators; parameters are placeholders) to layers, named by the module
    each operator ran in (``nn_module_stack``)."""

    def __init__(self, program, strict):
        _Builder.__init__(self, None, strict)
        signature = program.graph_signature
        self.parameters = dict(signature.inputs_to_parameters)  # placeholder name -> parameter name
        self.user_inputs = set(signature.user_inputs)
        self.seen_weights = set()

    def where(self, node):
        stack = node.meta.get("nn_module_stack") or {}
        path = list(stack.values())[-1][0] if stack else ""
        return path or node.name

    def label(self, node):
        return self.where(node) + ".attention"

    def is_parameter(self, node):
        return hasattr(node, "op") and node.op == "placeholder" and node.name in self.parameters

    def add_at(self, node, type_, fields, source, name=None):
        meta = _meta(source) if source is not None else None
        if meta is None:
            return self.skip(node, type_, "no tensor input shape")
        layer = {"name": self.unique(name or self.where(node)), "type": type_, "input": _instance(meta.shape)}
        layer.update(fields)
        if source.op == "placeholder" and source.name in self.user_inputs:
            layer["needs_input_gradient"] = False
        self.layers.append(layer)

    def skip(self, node, kind, why):
        where = self.where(node)
        if self.strict:
            raise ValueError(f"from_torch: {kind} at '{where}' is not supported ({why}); strict=False reports it "
                             "and leaves it out")
        self.unsupported.add(kind, str(where), why)

    def weight(self, node):
        """Whether the weight placeholder was used by an earlier layer (tied weights)."""
        tied = node.name in self.seen_weights
        self.seen_weights.add(node.name)
        return tied

    def operator(self, node):
        name = getattr(node.target, "_opname", None) or _name_of(node.target).split(".")[0]
        a = node.args
        if name in _EXPORT_VIEWS or node.target is operator.getitem:
            return None
        data = [x for x in a if hasattr(x, "op") and _meta(x) is not None and not self.is_parameter(x)]
        if name == "linear":
            w = a[1]
            fields = {"out_features": int(_meta(w).shape[0]), "bias": len(a) > 2 and a[2] is not None,
                      "tied": self.weight(w)}
            return self.add_at(node, "linear", fields, a[0])
        if name == "embedding":
            w = a[0]
            if self.weight(w):
                return self.skip(node, "embedding", "an embedding that shares another layer's weight")
            shape = _meta(w).shape
            return self.add_at(node, "embedding", {"vocabulary": int(shape[0]), "width": int(shape[1])}, a[1])
        if name in ("layer_norm", "native_layer_norm"):
            if len(a[1]) != 1:
                return self.skip(node, name, "normalization over more than the last axis")
            return self.add_at(node, "layernorm", {"affine": len(a) > 2 and a[2] is not None}, a[0])
        if name in ("conv2d", "convolution"):
            transposed = name == "convolution" and bool(a[6])
            w = _meta(a[1]).shape
            groups = int(a[-1]) if name == "convolution" else (int(a[6]) if len(a) > 6 else 1)
            stride, padding, dilation = (a[3] if len(a) > 3 else 1), (a[4] if len(a) > 4 else 0), (a[5] if len(a) > 5 else 1)
            if isinstance(padding, str):
                return self.skip(node, name, f"padding='{padding}'")
            fields = {"out_channels": int(w[1] * groups if transposed else w[0]), "kernel": _extent(list(w[2:])),
                      "stride": _extent(stride), "padding": _extent(padding), "dilation": _extent(dilation),
                      "groups": groups, "bias": len(a) > 2 and a[2] is not None}
            if transposed:
                fields["output_padding"] = _extent(a[7])
            return self.add_at(node, "conv_transpose2d" if transposed else "conv2d", fields, a[0])
        if name in ("batch_norm", "_native_batch_norm_legit_no_training", "_native_batch_norm_legit",
                    "native_batch_norm"):
            return self.add_at(node, "batchnorm2d", {"affine": a[1] is not None}, a[0])
        if name in ("add", "add_", "mul", "mul_", "sub", "sub_"):
            if len(data) == 2:
                return self.add_at(node, "multiply" if name.startswith("mul") else "add", {}, data[0],
                                   self.where(node) + "." + name.rstrip("_"))
            return self.skip(node, f"{name} with a scalar", "arithmetic with a constant has no roofplan layer")
        if name in ("addmm", "mm") and self.is_parameter(a[-1]) and len(data) == 1:
            return self.flat_linear(node, name, data[0], a[-1])
        if name in ("matmul", "bmm", "mm"):
            if len(data) != 2:
                return self.skip(node, "matmul with a parameter", "a weight outside a module (use nn.Linear)")
            return self.matmul(node, data)
        if name == "scaled_dot_product_attention":
            return self.attention(node, data)
        simple = {"relu": "relu", "relu_": "relu", "gelu": "gelu", "tanh": "tanh", "sigmoid": "sigmoid",
                  "silu": "silu", "softmax": "softmax", "_softmax": "softmax"}
        if name in simple:
            return self.add_at(node, simple[name], {}, a[0], self.where(node) + "." + simple[name])
        if name in ("max_pool2d", "max_pool2d_with_indices", "avg_pool2d"):
            kernel = a[1]
            stride = a[2] if len(a) > 2 and a[2] else kernel
            fields = {"kernel": _extent(kernel), "stride": _extent(stride),
                      "padding": _extent(a[3] if len(a) > 3 else 0),
                      "ceil_mode": bool(a[5] if name != "avg_pool2d" and len(a) > 5 else (a[4] if len(a) > 4 else False))}
            return self.add_at(node, "avgpool2d" if name == "avg_pool2d" else "maxpool2d", fields, a[0])
        if name in ("adaptive_avg_pool2d", "_adaptive_avg_pool2d"):
            return self.add_at(node, "adaptive_avgpool2d", {"output": _extent(a[1])}, a[0])
        if name in ("cat", "concat"):
            inputs = a[0]
            return self.add_at(node, "concat", {"output": _instance(_meta(node).shape), "inputs": len(inputs)},
                               inputs[0] if inputs else None)
        return self.skip(node, name, "no roofplan layer for this operator")


    def flat_linear(self, node, name, x, w):
        """x @ W (+ b) on rows flattened over the batch (Hugging Face's Conv1D in GPT-2: W is [in, out]): a linear
        layer on the rows of one instance."""
        rows, width = (int(d) for d in _meta(x).shape)
        if rows % self.batch:
            return self.skip(node, name, f"{rows} rows do not split over a batch of {self.batch}")
        per = rows // self.batch
        layer = {"name": self.unique(self.where(node)), "type": "linear",
                 "input": [per, width] if per > 1 else [width], "out_features": int(_meta(w).shape[1]),
                 "bias": name == "addmm", "tied": self.weight(w)}
        self.layers.append(layer)


def _export(module, example_inputs):
    import torch

    if not hasattr(torch, "export"):
        return None
    try:
        return torch.export.export(module, tuple(example_inputs), strict=False)
    except Exception as e:
        raise ValueError(f"from_torch: neither torch.fx nor torch.export can capture {type(module).__name__}: "
                         f"{type(e).__name__}: {str(e)[:500]}. Data-dependent control flow (an if or loop on a "
                         "tensor's values) cannot be captured; export the model to ONNX and load it with "
                         "roofplan.load(), or make the branch depend on shapes or arguments only") from None


def _capture_exported(module, example_inputs, strict, causal):
    program = _export(module, example_inputs)
    if program is None:
        return None
    builder = _ExportBuilder(program, strict)
    builder.batch = int(example_inputs[0].shape[0])
    builder.causal = causal
    for node in program.graph_module.graph.nodes:
        if node.op == "call_function":
            builder.operator(node)
    return builder


def _trace(module, example_inputs, input_names):
    import torch.fx

    try:
        from transformers import PreTrainedModel
        from transformers.utils.fx import symbolic_trace as hf_trace
    except ImportError:
        PreTrainedModel = None
    try:
        if PreTrainedModel is not None and isinstance(module, PreTrainedModel):
            return hf_trace(module, input_names=input_names)
        return torch.fx.symbolic_trace(module)
    except Exception as e:  # torch.fx's errors: TraceError, or any error the module's code raises on proxies
        raise ValueError(f"from_torch: torch.fx cannot capture {type(module).__name__}: {type(e).__name__}: {e}. "
                         "Data-dependent control flow (an if or loop on a tensor's values) cannot be traced; "
                         "export the model to ONNX and load it with roofplan.load(), or make the branch "
                         "depend on shapes or arguments only") from None


def capture(module, example_inputs, strict=False, id=None, input_names=None, causal=None):
    """from_torch's capture alone: (the roofplan-model/1 document, what was left out).  Needs torch only.  The
    module and its submodules keep their training modes."""
    import torch

    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"from_torch: expected a torch.nn.Module, got {type(module).__name__}")
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    example_inputs = tuple(example_inputs)
    if not example_inputs or not all(isinstance(x, torch.Tensor) for x in example_inputs):
        raise TypeError("from_torch: example_inputs must be a tensor or a non-empty tuple of tensors")
    if any(x.dim() < 2 for x in example_inputs):
        raise ValueError("from_torch: every example input needs a batch axis first and at least one more axis, got "
                         + ", ".join(str(list(x.shape)) for x in example_inputs))
    modes = [(m, m.training) for m in module.modules()]  # each submodule's own mode (a frozen BatchNorm in eval)
    try:
        return _capture(module, example_inputs, strict, id, input_names, causal)
    finally:
        for m, training in modes:
            m.training = training


def _capture(module, example_inputs, strict, id, input_names, causal):
    import torch
    from torch.fx.passes.shape_prop import ShapeProp

    try:
        graph_module = _trace(module, example_inputs, input_names or ["input_ids"])
    except ValueError:
        builder = _capture_exported(module, example_inputs, strict, causal)  # torch 2: torch.export, ATen ops
        if builder is None:
            raise
        return _document(module, example_inputs, builder, id)
    graph_module.eval()  # shapes only: eval mode runs any batch (BatchNorm in training needs two samples)
    try:
        with torch.no_grad():
            ShapeProp(graph_module).propagate(*example_inputs)
    except Exception as e:
        raise ValueError(f"from_torch: running {type(module).__name__} on the example inputs failed: "
                         f"{type(e).__name__}: {e}") from None
    builder = _Builder(graph_module, strict)
    builder.causal = causal
    for node in graph_module.graph.nodes:
        if node.op == "call_module":
            builder.module(node)
        elif node.op in ("call_function", "call_method"):
            builder.function(node)
    return _document(module, example_inputs, builder, id)


def _document(module, example_inputs, builder, id):
    if not builder.layers:
        raise ValueError(f"from_torch: no operation of {type(module).__name__} maps to a roofplan layer")
    document = {"schema": "roofplan-model/1", "id": id or type(module).__name__.lower(),
                "description": f"{type(module).__name__} captured by roofplan.from_torch",
                "input": _instance(example_inputs[0].shape), "layers": builder.layers}
    return document, builder.unsupported.report()


def from_torch(module, example_inputs, strict=False, id=None, input_names=None, causal=None):
    """A roofplan model of `module` (a torch.nn.Module) run on `example_inputs` (a tensor or a tuple of them; the
    first axis is the batch).  Returns a :class:`roofplan.Model` whose ``unsupported`` lists what was left out
    (type, count, first occurrence, reason); ``strict=True`` makes any of it a ValueError.  Hugging Face models
    take ``input_names`` (default: ``["input_ids"]``) and are traced with transformers' fx tracer, or captured
    with torch.export where that fails (transformers 5 on Python 3.12: see
    validation/results/2026-11-24-h100-from-torch).

    Scaled-dot-product attention called with ``is_causal=True`` computes only the pairs the mask keeps (as the
    fused kernels do).  A mask *tensor* is taken as a general mask (every pair computed) unless ``causal=True``
    says it is the causal mask: Hugging Face decoders give SDPA a materialised causal mask when captured, where
    eager PyTorch gives ``is_causal=True``."""
    from ._model import from_json  # here: capture() runs where only torch is installed (validation/python/)

    document, unsupported = capture(module, example_inputs, strict, id, input_names, causal)
    model = from_json(document)
    model.unsupported = unsupported
    return model
