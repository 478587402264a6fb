"""Any PyTorch module as a roofplan model: the module's graph is captured with torch.fx (Hugging Face models with
transformers' own fx tracer), every tensor's shape is propagated with the example inputs, and each operation that
computes is mapped to roofplan's layers (docs/python.md).  Operations written in the model's code — functional
activations, additions, matrix products, scaled-dot-product attention — are layers too, so what eager PyTorch
launches is what roofplan counts.  Views (reshape, permute, transpose, indexing) cost nothing and are skipped;
anything else is reported (type, count, first occurrence), or raised with ``strict=True``.

Shapes are per example: the first axis of every tensor an operation reads is the batch, or the batch folded with
other axes (``x.view(-1, d)``, attention scores of ``[batch·heads, t, t]``): a folded operation runs that many
times per example (more rows, more products, or the layer's ``repeat``).  Each parameter is counted once, by
identity: a module called again on the same shape runs its layer again (``repeat``), a linear layer whose weight
another layer counts is ``tied``.
"""
import operator
from collections import OrderedDict

# Operations that only view or reshape (no kernel of their own in roofplan's counting).
_VIEWS = {"view", "reshape", "permute", "transpose", "contiguous", "size", "dim", "unsqueeze", "squeeze", "expand",
          "expand_as", "flatten_view", "chunk", "split", "t", "type_as", "to", "float", "half", "bfloat16", "detach",
          "clone", "getitem", "getattr", "narrow", "unbind", "repeat_interleave_view", "masked_fill_view",
          "new_ones", "new_zeros", "ones", "zeros", "arange", "full", "finfo", "tensor"}
_ACTIVATIONS = {"relu": "relu", "relu_": "relu", "gelu": "gelu", "tanh": "tanh", "sigmoid": "sigmoid", "silu": "silu",
                "softmax": "softmax", "dropout": "dropout", "flatten": "flatten"}
# Arithmetic of two tensors (in place too): a division is a product's work, as the ONNX importer counts it.
_ARITHMETIC = {"add": "add", "add_": "add", "iadd": "add", "sub": "add", "sub_": "add", "isub": "add",
               "mul": "multiply", "mul_": "multiply", "imul": "multiply", "div": "multiply", "div_": "multiply",
               "truediv": "multiply", "itruediv": "multiply"}
# Operations both capture routes (torch.fx and torch.export) map alike (_Builder.tensor_op).
_TENSOR_OPS = {*_ARITHMETIC, "matmul", "bmm", "mm", "scaled_dot_product_attention"}
# Layers that read one C×H×W map: a batch folded with other axes runs them `repeat` times.
_GRID = {"conv2d", "conv_transpose2d", "batchnorm2d", "lrn", "maxpool2d", "avgpool2d", "adaptive_avgpool2d"}


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


def _adaptive_output(size, shape):
    """adaptive_avg_pool2d's output grid: None keeps that axis of the input (`shape`, batch included)."""
    size = list(size) if isinstance(size, (tuple, list)) else [size, size]
    return _extent([int(shape[-2 + i]) if s is None else int(s) for i, s in enumerate(size)])


def _meta(node):
    m = node.meta.get("tensor_meta", node.meta.get("val"))  # torch.fx's ShapeProp, or torch.export's value
    if m is None or hasattr(m, "shape"):
        return m
    if isinstance(m, (tuple, list)):  # a node with several outputs: its first tensor's
        return next((x for x in m if hasattr(x, "shape")), None)
    return None


def _shape(node):
    return [int(d) for d in _meta(node).shape]


def _instance(shape):
    return [int(d) for d in shape[1:]]


def _product(dims):
    n = 1
    for d in dims:
        n *= int(d)
    return n


def _same_call(first, again):
    """Whether two layer records are the same computation (a module called twice on the same shape)."""
    ignore = ("name", "repeat")
    return ({k: v for k, v in first.items() if k not in ignore} == {k: v for k, v in again.items() if k not in ignore})


class _Builder:
    """Maps a torch.fx graph, its shapes propagated (ShapeProp), to roofplan-model/1 layers."""

    def __init__(self, root, strict, batch):
        import torch.nn as nn

        self.nn = nn
        self.root = root
        self.strict = strict
        self.batch = batch  # the example inputs' first axis
        self.layers = []
        self.names = {}
        self.used = set()
        self.unsupported = _Unsupported()
        self.causal = None  # from_torch's causal=: what an attention mask tensor is (None: a general mask)
        self.owner = {}  # a parameter's key (its identity) -> the index of the layer that counts it

    # --- where things are ------------------------------------------------------------------------------------
    def where(self, node):
        return node.target if node.op == "call_module" else node.name

    def op_name(self, node, what):
        """The name of a layer made from a function call: the call's node name."""
        return node.name

    def label(self, node):
        """The name of the layers made from an attention call."""
        return node.name

    def is_input(self, node):
        """Whether `node` is an example input (no one asks for its gradient)."""
        return node.op == "placeholder"

    def parameter(self, node):
        """The key of the parameter `node` reads as a whole (a get_attr of an nn.Parameter), or None."""
        if getattr(node, "op", None) != "get_attr":
            return None
        try:
            return id(self.root.get_parameter(node.target))
        except AttributeError:  # a buffer or a constant
            return None

    def operands(self, node):
        """The tensors an operation reads, positional and keyword, lists included, in order."""
        found = []
        for a in list(node.args) + list(node.kwargs.values()):
            for x in (a if isinstance(a, (list, tuple)) else (a,)):
                if hasattr(x, "op") and _meta(x) is not None:
                    found.append(x)
        return found

    def first_tensor(self, node):
        return next(iter(self.operands(node)), None)

    # --- layers ----------------------------------------------------------------------------------------------
    def unique(self, name):
        """A layer name no earlier layer has, at most 63 characters (roofplan-model/1's limit): the name's last
        characters, and ':n' for its n-th use (truncated before the suffix is added, so two long names that end
        alike stay apart)."""
        base = name.replace("/", ".")[-63:]
        n = self.names.get(base, 0)
        while True:
            n += 1
            suffix = "" if n == 1 else f":{n}"
            candidate = base[len(base) + len(suffix) - 63:] + suffix if len(base) + len(suffix) > 63 else base + suffix
            if candidate not in self.used:
                break
        self.names[base] = n
        self.used.add(candidate)
        return candidate

    def place(self, node, kind, shape):
        """(per-example input shape, repeat) of a layer of `kind` reading `shape` (batch axis included): the first
        axis is the batch, or the batch folded with other axes, which become a leading axis of the input (rows
        of a linear layer, elements of an activation) or, for layers of one C×H×W map, the layer's repeat.
        None (reported) where the first axis is not a multiple of the batch: the batch was moved elsewhere."""
        shape = [int(d) for d in shape]
        if not shape:
            self.skip(node, kind, "a scalar: no batch axis")
            return None
        if shape[0] % self.batch:
            self.skip(node, kind, f"its input {shape} does not start with the batch ({self.batch}) or a multiple "
                                  "of it (the batch axis was moved): its work per example is unknown")
            return None
        fold, rest = shape[0] // self.batch, shape[1:]
        if fold == 1:
            return rest or [1], 1
        if kind in _GRID or len(rest) >= 4:
            return rest or [1], fold
        return [fold] + rest, 1

    def emit(self, node, type_, fields, shape, source=None, params=(), name=None):
        """Adds a layer of `type_` that reads a tensor of `shape` and counts `params` (parameter keys)."""
        placed = self.place(node, type_, shape)
        if placed is not None:
            self.append(node, type_, fields, placed, source, params, name)

    def append(self, node, type_, fields, placed, source=None, params=(), name=None):
        input_, repeat = placed
        layer = {"name": "", "type": type_, "input": list(input_)}
        layer.update(fields)
        if repeat != 1:
            layer["repeat"] = repeat
        if source is not None and self.is_input(source):
            layer["needs_input_gradient"] = False
        if self.counts_once(node, layer, list(params)):
            layer["name"] = self.unique(name or self.where(node))
            self.layers.append(layer)

    def counts_once(self, node, layer, keys):
        """Whether `layer` is a new layer: every parameter is counted by the first layer that reads it.  A linear
        layer whose parameters are counted already is `tied`; a call of an earlier layer's module with the same
        shape runs that layer once more (its repeat).  Other sharing has no roofplan-model/1 record (reported)."""
        seen = [k for k in keys if k in self.owner]
        if not seen:
            for k in keys:
                self.owner[k] = len(self.layers)
            return True
        if len(seen) < len(keys):
            self.skip(node, layer["type"], "shares some of its parameters with another layer, not all")
            return False
        if layer["type"] == "linear":
            layer["tied"] = True
            return True
        owners = {self.owner[k] for k in keys}
        first = self.layers[owners.pop()] if len(owners) == 1 else None
        if first is not None and _same_call(first, layer):
            first["repeat"] = first.get("repeat", 1) + layer.get("repeat", 1)
            return False
        what = f"'{first['name']}'" if first is not None else "other layers"
        self.skip(node, layer["type"], f"reuses the parameters of {what} on another shape or input: roofplan-model/1 "
                                       "shares parameters only between linear layers (tied) and identical calls "
                                       "(repeat)")
        return False

    def skip(self, node, kind, why, where=None):
        where = where if where is not None else self.where(node)
        if self.strict:
            raise ValueError(f"from_torch: {kind} at '{where}' is not supported ({why}); strict=False reports it "
                             "and leaves it out")
        self.unsupported.add(kind, str(where), why)

    def uncounted_parameters(self, nodes):
        """Reports each parameter that no layer counts (one used directly: ``x * self.scale``)."""
        reported = set()
        for node in nodes:
            key = self.parameter(node)
            if key is None or key in self.owner or key in reported or not node.users:
                continue
            reported.add(key)
            self.skip(node, "parameter outside a module",
                      f"{_product(_shape(node)):,} elements used directly: no roofplan layer owns a bare "
                      "parameter, so they are not counted", where=self.parameter_name(node))

    def parameter_name(self, node):
        return node.target

    # --- modules -------------------------------------------------------------------------------------------
    def module(self, node):
        nn = self.nn
        m = self.root.get_submodule(node.target)
        kind = type(m).__name__
        source = self.first_tensor(node)
        if source is None:
            return self.skip(node, kind, "no tensor input shape")
        shape = _shape(source)
        params = [id(p) for p in m.parameters(recurse=False)]

        def emit(type_, fields):
            return self.emit(node, type_, fields, shape, source, params)

        if isinstance(m, nn.Conv2d):
            if isinstance(m.padding, str):
                return self.skip(node, kind, f"padding='{m.padding}'")
            fields = {"out_channels": m.out_channels, "kernel": _extent(m.kernel_size), "stride": _extent(m.stride),
                      "padding": _extent(m.padding), "dilation": _extent(m.dilation), "groups": m.groups,
                      "bias": m.bias is not None}
            return emit("conv2d", fields)
        if isinstance(m, nn.ConvTranspose2d):
            fields = {"out_channels": m.out_channels, "kernel": _extent(m.kernel_size), "stride": _extent(m.stride),
                      "padding": _extent(m.padding), "output_padding": _extent(m.output_padding),
                      "dilation": _extent(m.dilation), "groups": m.groups, "bias": m.bias is not None}
            return emit("conv_transpose2d", fields)
        if isinstance(m, nn.Linear):
            return emit("linear", {"out_features": m.out_features, "bias": m.bias is not None, "tied": False})
        if isinstance(m, nn.Embedding):
            return emit("embedding", {"vocabulary": m.num_embeddings, "width": m.embedding_dim})
        if isinstance(m, nn.BatchNorm2d):
            return emit("batchnorm2d", {"affine": bool(m.affine)})
        if isinstance(m, nn.LayerNorm):
            if len(m.normalized_shape) != 1:
                return self.skip(node, kind, "normalization over more than the last axis")
            return emit("layernorm", {"affine": bool(m.elementwise_affine)})
        if isinstance(m, nn.LocalResponseNorm):
            return emit("lrn", {"size": m.size})
        simple = {nn.ReLU: "relu", nn.Tanh: "tanh", nn.Sigmoid: "sigmoid", nn.SiLU: "silu", nn.Flatten: "flatten",
                  nn.GELU: "gelu", nn.Softmax: "softmax"}
        for cls, type_ in simple.items():
            if isinstance(m, cls):
                return emit(type_, {})
        if isinstance(m, nn.Dropout):
            return emit("dropout", {"probability": float(m.p)})
        if isinstance(m, (nn.MaxPool2d, nn.AvgPool2d)):
            if getattr(m, "dilation", 1) not in (1, (1, 1)):
                return self.skip(node, kind, "dilated pooling")
            fields = {"kernel": _extent(m.kernel_size), "stride": _extent(m.stride or m.kernel_size),
                      "padding": _extent(m.padding), "ceil_mode": bool(m.ceil_mode)}
            return emit("maxpool2d" if isinstance(m, nn.MaxPool2d) else "avgpool2d", fields)
        if isinstance(m, nn.AdaptiveAvgPool2d):
            return emit("adaptive_avgpool2d", {"output": _adaptive_output(m.output_size, shape)})
        if isinstance(m, nn.Identity):
            return None
        return self.skip(node, kind, "no roofplan layer for this module")

    # --- functions and methods -------------------------------------------------------------------------------
    def function(self, node):
        name = _name_of(node.target)
        if name in _VIEWS or node.target in (getattr, operator.getitem):
            return None
        operands = self.operands(node)
        if not operands and _meta(node) is None:
            return None  # arithmetic on sizes (x.size(0) * 2): Python integers, no kernel
        data = [t for t in operands if self.parameter(t) is None]
        if name in ("cat", "concat", "stack"):
            return self.concat(node, name, data)
        if name in _TENSOR_OPS:
            return self.tensor_op(node, name, operands, data)
        if name == "linear":
            return self.functional_linear(node, operands)
        if name == "layer_norm":
            return self.layer_norm(node, operands)
        if name in _ACTIVATIONS and data:
            fields = {}
            if name == "dropout":
                p = node.kwargs.get("p", node.args[1] if len(node.args) > 1 else 0.5)
                if not node.kwargs.get("training", node.args[2] if len(node.args) > 2 else True):
                    return None
                fields = {"probability": float(p)}
            return self.emit(node, _ACTIVATIONS[name], fields, _shape(data[0]), data[0],
                             name=self.op_name(node, _ACTIVATIONS[name]))
        if name in ("adaptive_avg_pool2d",) and data:
            size = node.args[1] if len(node.args) > 1 else node.kwargs["output_size"]
            return self.emit(node, "adaptive_avgpool2d", {"output": _adaptive_output(size, _shape(data[0]))},
                             _shape(data[0]), data[0])
        return self.skip(node, name, "no roofplan layer for this operation")

    def tensor_op(self, node, name, operands, data):
        """What both capture routes map alike (name in _TENSOR_OPS): arithmetic between tensors, products of
        activations, fused attention.  `data`: the operands that are not parameters."""
        if name in _ARITHMETIC:
            return self.arithmetic(node, _ARITHMETIC[name], name, operands, data)
        if name == "scaled_dot_product_attention":
            return self.attention(node, data)
        if len(data) != len(operands):
            return self.skip(node, "matmul with a parameter", "a weight outside a module (use nn.Linear)")
        return self.matmul(node, data)

    def arithmetic(self, node, type_, name, operands, data):
        """A sum or product of two tensors (a parameter among them: ``x * self.scale``), over the broadcast shape."""
        if len(operands) != 2 or not data:
            return self.skip(node, f"{name.rstrip('_')} with a scalar",
                             "arithmetic with a constant has no roofplan layer")
        return self.emit(node, type_, {}, _shape(node), data[0], name=self.op_name(node, name.rstrip("_")))

    def functional_linear(self, node, operands):
        """F.linear(x, weight, bias) with parameters as weight and bias: a linear layer that counts them."""
        x, weights = operands[0], operands[1:3]
        keys = [self.parameter(w) for w in weights]
        if not weights or None in keys:
            return self.skip(node, "functional linear", "a weight that is not a parameter (an activation)")
        fields = {"out_features": _shape(weights[0])[0], "bias": len(weights) == 2, "tied": False}
        return self.emit(node, "linear", fields, _shape(x), x, keys, name=self.op_name(node, "linear"))

    def layer_norm(self, node, operands):
        """F.layer_norm(x, shape, weight, bias): affine when both γ and β are given (and counted), none without."""
        shape = node.args[1] if len(node.args) > 1 else node.kwargs.get("normalized_shape")
        if not isinstance(shape, (list, tuple)) or len(shape) != 1:
            return self.skip(node, "layer_norm", "normalization over more than the last axis")
        x, affine = operands[0], operands[1:]
        params = [self.parameter(p) for p in affine]
        if affine and (len(affine) != 2 or None in params):
            return self.skip(node, "layer_norm", "γ or β alone, or not parameters: roofplan's layernorm has both "
                                                 "or neither")
        return self.emit(node, "layernorm", {"affine": bool(affine)}, _shape(x), x, params,
                         name=self.op_name(node, "layer_norm"))

    def concat(self, node, name, data):
        """torch.cat and torch.stack: a copy of the inputs into the output."""
        if len(data) < 2:
            return self.skip(node, name, "fewer than two tensors: roofplan's concat joins two or more")
        placed = self.place(node, "concat", _shape(node))
        if placed is not None:
            self.append(node, "concat", {"output": placed[0], "inputs": len(data)}, placed, data[0])

    def matmul(self, node, data):
        a, b = (_shape(t) for t in data)
        if len(a) < 3 or len(b) < 3 or a[:-2] != b[:-2]:
            return self.skip(node, "matmul", f"operands {a} and {b}: batched products of equal leading axes only")
        if a[0] % self.batch:
            return self.place(node, "matmul", a)  # reported
        count = a[0] // self.batch * _product(a[1:-2])  # a batch folded with the heads: more products per example
        input_ = [count, a[-2], a[-1]] if count > 1 else a[-2:]
        return self.append(node, "matmul", {"count": count, "m": a[-2], "k": a[-1], "n": b[-1]}, (input_, 1), data[0],
                           name=self.op_name(node, "matmul"))

    def attention(self, node, tensors):
        if len(tensors) < 3:
            return self.skip(node, "scaled_dot_product_attention", "query, key and value must be tensors")
        q, k, v = (_shape(t) for t in tensors[:3])
        if q[0] % self.batch:
            return self.place(node, "scaled_dot_product_attention", q)  # reported
        count = q[0] // self.batch * _product(q[1:-2])
        m, keys = q[-2], k[-2]
        base = self.label(node)
        # A causal mask given as is_causal (not as a mask tensor): the fused kernels compute only the pairs it keeps.
        causal = bool(node.kwargs.get("is_causal", node.args[5] if len(node.args) > 5 else False))
        mask = node.kwargs.get("attn_mask", node.args[3] if len(node.args) > 3 else None)
        causal = causal and mask is None
        if self.causal is not None and mask is not None:  # the caller says what the mask is (from_torch's causal=)
            causal = self.causal
        scores = [count, m, keys]
        self.append(node, "matmul", {"count": count, "m": m, "k": q[-1], "n": keys, "causal": 1 if causal else 0},
                    ([count, m, q[-1]], 1), name=base + ".scores")
        self.append(node, "softmax", {}, (scores, 1), name=base + ".softmax")
        p = node.kwargs.get("dropout_p", node.args[4] if len(node.args) > 4 else 0.0)
        if p:
            self.append(node, "dropout", {"probability": float(p)}, (scores, 1), name=base + ".dropout")
        self.append(node, "matmul", {"count": count, "m": m, "k": keys, "n": v[-1], "causal": 2 if causal else 0},
                    (scores, 1), name=base + ".context")
        return None


# --- torch.export: modules torch.fx cannot trace (Hugging Face models under recent transformers) -------------------

_EXPORT_VIEWS = {"view", "_unsafe_view", "reshape", "permute", "transpose", "t", "expand", "slice", "select",
                 "unsqueeze", "squeeze", "contiguous", "clone", "_to_copy", "to", "alias", "detach", "lift_fresh_copy",
                 "arange", "full", "zeros", "ones", "scalar_tensor", "sym_size", "split", "split_with_sizes", "chunk",
                 "unbind", "getitem", "empty", "new_ones", "new_zeros", "_assert_tensor_metadata",
                 "sym_constrain_range_for_size", "_assert_scalar", "copy", "lift_fresh",
                 "flatten", "unflatten", "as_strided", "index_select_view"}


class _ExportBuilder(_Builder):
    """Maps a torch.export graph (ATen operators; parameters are placeholders) to layers, named by the module
    each operator ran in (``nn_module_stack``)."""

    def __init__(self, program, strict, batch):
        _Builder.__init__(self, None, strict, batch)
        signature = program.graph_signature
        self.parameters = dict(signature.inputs_to_parameters)  # placeholder name -> parameter name
        self.user_inputs = set(signature.user_inputs)

    def where(self, node):
        stack = node.meta.get("nn_module_stack") or {}
        path = list(stack.values())[-1][0] if stack else ""
        return path or node.name

    def op_name(self, node, what):
        return self.where(node) + "." + what

    def label(self, node):
        return self.where(node) + ".attention"

    def is_input(self, node):
        return node.op == "placeholder" and node.name in self.user_inputs

    def parameter(self, node):
        if getattr(node, "op", None) == "placeholder" and node.name in self.parameters:
            return node.name
        return None

    def parameter_name(self, node):
        return self.parameters[node.name]

    def operator(self, node):
        name = getattr(node.target, "_opname", None) or _name_of(node.target).split(".")[0]
        a = node.args
        if name in _EXPORT_VIEWS or node.target is operator.getitem:
            return None
        operands = self.operands(node)
        data = [x for x in operands if self.parameter(x) is None]
        weights = lambda *xs: [self.parameter(x) for x in xs if x is not None]  # noqa: E731
        if name == "linear":
            bias = a[2] if len(a) > 2 else None
            fields = {"out_features": _shape(a[1])[0], "bias": bias is not None, "tied": False}
            return self.emit(node, "linear", fields, _shape(a[0]), a[0], weights(a[1], bias))
        if name == "embedding":
            vocabulary, width = _shape(a[0])
            return self.emit(node, "embedding", {"vocabulary": vocabulary, "width": width}, _shape(a[1]), a[1],
                             weights(a[0]))
        if name in ("layer_norm", "native_layer_norm"):
            if len(a[1]) != 1:
                return self.skip(node, name, "normalization over more than the last axis")
            affine = [x for x in a[2:4] if x is not None]
            if len(affine) == 1:
                return self.skip(node, name, "γ or β alone: roofplan's layernorm has both or neither")
            return self.emit(node, "layernorm", {"affine": bool(affine)}, _shape(a[0]), a[0], weights(*affine))
        if name in ("conv2d", "convolution"):
            transposed = name == "convolution" and bool(a[6])
            w = _shape(a[1])
            groups = int(a[-1]) if name == "convolution" else (int(a[6]) if len(a) > 6 else 1)
            stride, padding, dilation = (a[3] if len(a) > 3 else 1), (a[4] if len(a) > 4 else 0), (a[5] if len(a) > 5 else 1)
            if isinstance(padding, str):
                return self.skip(node, name, f"padding='{padding}'")
            bias = a[2] if len(a) > 2 else None
            fields = {"out_channels": int(w[1] * groups if transposed else w[0]), "kernel": _extent(list(w[2:])),
                      "stride": _extent(stride), "padding": _extent(padding), "dilation": _extent(dilation),
                      "groups": groups, "bias": bias is not None}
            if transposed:
                fields["output_padding"] = _extent(a[7])
            return self.emit(node, "conv_transpose2d" if transposed else "conv2d", fields, _shape(a[0]), a[0],
                             weights(a[1], bias))
        if name in ("batch_norm", "_native_batch_norm_legit_no_training", "_native_batch_norm_legit",
                    "native_batch_norm"):
            return self.emit(node, "batchnorm2d", {"affine": a[1] is not None}, _shape(a[0]), a[0],
                             weights(a[1], a[2]))
        if name in ("addmm", "mm") and self.parameter(a[-1]) is not None and len(data) == 1:
            return self.flat_linear(node, name, data[0], a[-1], a[0] if name == "addmm" else None)
        if name in _TENSOR_OPS:
            return self.tensor_op(node, name, operands, data)
        simple = {"relu": "relu", "relu_": "relu", "gelu": "gelu", "tanh": "tanh", "sigmoid": "sigmoid",
                  "silu": "silu", "softmax": "softmax", "_softmax": "softmax"}
        if name in simple:
            return self.emit(node, simple[name], {}, _shape(a[0]), a[0], name=self.op_name(node, simple[name]))
        if name in ("max_pool2d", "max_pool2d_with_indices", "avg_pool2d"):
            kernel = a[1]
            stride = a[2] if len(a) > 2 and a[2] else kernel
            fields = {"kernel": _extent(kernel), "stride": _extent(stride),
                      "padding": _extent(a[3] if len(a) > 3 else 0),
                      "ceil_mode": bool(a[5] if name != "avg_pool2d" and len(a) > 5 else (a[4] if len(a) > 4 else False))}
            return self.emit(node, "avgpool2d" if name == "avg_pool2d" else "maxpool2d", fields, _shape(a[0]), a[0])
        if name in ("adaptive_avg_pool2d", "_adaptive_avg_pool2d"):
            return self.emit(node, "adaptive_avgpool2d", {"output": _extent(a[1])}, _shape(a[0]), a[0])
        if name in ("cat", "concat", "stack"):
            return self.concat(node, name, data)
        if name in ("dropout", "native_dropout"):
            return self.dropout(node, a)
        return self.skip(node, name, "no roofplan layer for this operator")

    def dropout(self, node, a):
        """aten.dropout(x, p, train) as the torch.fx route maps dropout: an nn.Dropout module's always (the
        training step's dropout, whatever mode the module was captured in), a functional one when it trains."""
        module = self.in_dropout_module(node)
        train = a[2] if len(a) > 2 else None  # native_dropout's None trains
        if not module and train is not None and not train:
            return None
        return self.emit(node, "dropout", {"probability": float(a[1])}, _shape(a[0]), a[0],
                         name=self.where(node) if module else self.op_name(node, "dropout"))

    def in_dropout_module(self, node):
        import torch.nn as nn

        stack = node.meta.get("nn_module_stack") or {}
        if not stack:
            return False
        kind = list(stack.values())[-1][1]  # the innermost module's type: a class, or its qualified name
        if isinstance(kind, str):
            return kind.rsplit(".", 1)[-1] == "Dropout" and kind.startswith("torch.nn")
        return isinstance(kind, type) and issubclass(kind, nn.Dropout)

    def flat_linear(self, node, name, x, w, bias):
        """x @ W (+ b) on rows flattened over the batch (Hugging Face's Conv1D in GPT-2: W is [in, out]): a linear
        layer on the rows of each example."""
        fields = {"out_features": _shape(w)[1], "bias": bias is not None, "tied": False}
        return self.emit(node, "linear", fields, _shape(x), x, [self.parameter(p) for p in (w, bias) if p is not None])


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
    return _map_exported(program, int(example_inputs[0].shape[0]), strict, causal)


def _map_exported(program, batch, strict, causal):
    """The layers of an exported program (its graph_signature and graph_module) for an example batch of `batch`."""
    builder = _ExportBuilder(program, strict, batch)
    builder.causal = causal
    nodes = list(program.graph_module.graph.nodes)
    for node in nodes:
        if node.op == "call_function":
            builder.operator(node)
    builder.uncounted_parameters(nodes)
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
    builder = _Builder(graph_module, strict, int(example_inputs[0].shape[0]))
    builder.causal = causal
    nodes = list(graph_module.graph.nodes)
    for node in nodes:
        if node.op == "call_module":
            builder.module(node)
        elif node.op in ("call_function", "call_method"):
            builder.function(node)
    builder.uncounted_parameters(nodes)
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
