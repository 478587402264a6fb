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

from ._model import from_json

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
    m = node.meta.get("tensor_meta")
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
        base = node.name
        self.layers.append({"name": self.unique(base + ".scores"), "type": "matmul", "input": _instance(q),
                            "count": count, "m": int(q[-2]), "k": int(q[-1]), "n": int(k[-2])})
        self.layers.append({"name": self.unique(base + ".softmax"), "type": "softmax",
                            "input": [count, int(q[-2]), int(k[-2])]})
        p = node.kwargs.get("dropout_p", 0.0)
        if p:
            self.layers.append({"name": self.unique(base + ".dropout"), "type": "dropout",
                                "input": [count, int(q[-2]), int(k[-2])], "probability": float(p)})
        self.layers.append({"name": self.unique(base + ".context"), "type": "matmul",
                            "input": [count, int(q[-2]), int(k[-2])], "count": count, "m": int(q[-2]),
                            "k": int(k[-2]), "n": int(v[-1])})
        return None


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


def from_torch(module, example_inputs, strict=False, id=None, input_names=None):
    """A roofplan model of `module` (a torch.nn.Module) run on `example_inputs` (a tensor or a tuple of them; the
    first axis is the batch).  Returns a :class:`roofplan.Model` whose ``unsupported`` lists what was left out
    (type, count, first occurrence, reason); ``strict=True`` makes any of it a ValueError.  Hugging Face models
    take ``input_names`` (default: ``["input_ids"]``) and are traced with transformers' fx tracer."""
    import torch
    from torch.fx.passes.shape_prop import ShapeProp

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
    graph_module = _trace(module, example_inputs, input_names or ["input_ids"])
    was_training = module.training
    graph_module.eval()
    try:
        with torch.no_grad():
            ShapeProp(graph_module).propagate(*example_inputs)
    except Exception as e:
        raise ValueError(f"from_torch: running {type(module).__name__} on the example inputs failed: "
                         f"{type(e).__name__}: {e}") from None
    finally:
        graph_module.train(was_training)
    builder = _Builder(graph_module, strict)
    for node in graph_module.graph.nodes:
        if node.op == "call_module":
            builder.module(node)
        elif node.op in ("call_function", "call_method"):
            builder.function(node)
    if not builder.layers:
        raise ValueError(f"from_torch: no operation of {type(module).__name__} maps to a roofplan layer")
    document = {"schema": "roofplan-model/1", "id": id or type(module).__name__.lower(),
                "description": f"{type(module).__name__} captured by roofplan.from_torch",
                "input": _instance(example_inputs[0].shape), "layers": builder.layers}
    model = from_json(document)
    model.unsupported = builder.unsupported.report()
    return model
