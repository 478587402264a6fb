#!/usr/bin/env python3
"""Where the host's time goes in one step of an end-to-end case, item by item, beside what roofplan's eager host
model (docs/model.md §3a item 3) charges for the same items.  Validation only: nothing here calibrates, and no
figure here may be fitted into a profile (the host costs come from validation/ops/op_bench.py's host groups).

Measure (on the GPU machine), for each case (validation/e2e/e2e_suite.py's builders and step closures):
  (a) host_s: wall time of step() (no synchronisation inside the timing), median of --steps uninstrumented steps,
      taken before and again after the profiled passes (drift);
  (b) --rounds interleaved rounds, each --round-steps uninstrumented steps, a host-speed probe (a view op in a
      loop) and ONE step under torch.profiler (CPU activity only; record_shapes off, see (d)), inside a
      record_function marker: every operator called from Python (an aten op with no enclosing aten op or
      autograd node, on the Python thread) with its duration and the gap before it (the Python that ran between
      it and the item before: module __call__ machinery, Hugging Face code, hooks), grouped by aten name and by
      item category; the casts autocast inserts inside an operator (the top-most aten::to under it) are carved
      out of their operator into their own category;
  (c) training: every autograd node (autograd::engine::evaluate_function on the engine thread) with its duration
      and the engine's gap before it; the optimizer (Optimizer.step / zero_grad markers) and GradScaler's calls
      (their Python, the gaps before their ops, counts as theirs);
  (d) the profiler's overhead: each round's profiled step against the same round's uninstrumented median gives
      the round's scale (host / profiled); every category is given raw and scaled (the median over rounds of
      raw x scale), and the CPU events per step give the overhead per event; two more profiled steps with
      record_shapes=True give the operators' shapes and what recording them costs;
  (e) an attribution pass (one profiled step with global module hooks that open a record_function per module
      call; not timed): the innermost module class of each operator (so that GPT-2's tanh-GELU pieces count as
      GELU), module calls per step by class, leaf and container;
  (f) host micro-costs of the same process: host_ops.py's (Python call, view, transpose, tiny add) and a few more
      (nn.Module call of an Identity, Dropout in eval, permute, reshape, no-op contiguous, tiny Linear/LayerNorm).

  python3 validation/e2e/host_items.py measure --json host_items.json --git-sha SHA [--cases id,id]

Compare (here, no GPU): set the measured categories beside roofplan's predicted host cost of the same case, per
category, from a per-kernel dump of the prediction (every kernel with its HostOp, views, container calls, silent
nodes, autocast flags and host cost; written by the results directory's host_cost_dump.cpp against this tree's
headers and the same calibrated profile as compare_e2e.py's main H200 table). The host ran in two speed states
on the H200 leases (validation/results/2026-11-24-h200-host-items/README.md): the tables give each category raw,
scaled, and normalised to the host time of the rounds whose probe ran fast (--fast-probe-us), with one operator
whose time is a profiler artifact (--artifact) taken out first:

  python3 validation/e2e/host_items.py compare --measured host_items.json --predicted case=dump.json ... [--md out.md]
"""
import argparse
import collections
import json
import statistics
import sys
import time
import traceback

sys.path.insert(0, __file__.rsplit("/", 1)[0])

DEV = "cuda"
DEFAULT = ["bert-qa-infer-s128-b1-fp32", "gpt2-infer-s128-b1-amp-bf16", "bert-swag-train-s80-b16-amp-fp16",
           "resnet50-infer-b1-fp32"]
STEP_MARK = "host_items::step"
MOD_MARK = "host_items::mod::"
NODE_MARK = "autograd::engine::evaluate_function:"

# ---------------------------------------------------------------------------------------------------------------
# categories (shared by the measured and the predicted side)
CATEGORIES = ["linear/addmm", "layer_norm", "softmax/SDPA", "dropout", "gelu", "add", "views/reshape/permute",
              "embedding", "casts (autocast, inside ops)", "casts (explicit .to)", "kv cache (cat, tensor([]))",
              "conv", "batch_norm", "relu", "pooling", "loss", "other ops", "Python glue (gaps between ops)",
              "autograd: accumulate grad", "autograd: engine gaps", "optimizer + scaler", "sync (.item) wait"]

VIEW_OPS = {"view", "reshape", "permute", "transpose", "contiguous", "expand", "expand_as", "unsqueeze", "squeeze",
            "split", "split_with_sizes", "slice", "select", "chunk", "narrow", "t", "flatten", "unflatten",
            "as_strided", "_unsafe_view", "alias", "view_as", "unbind", "detach", "movedim", "numpy_T",
            "_reshape_alias", "swapaxes", "transpose_", "unsqueeze_", "squeeze_"}
LINEAR_OPS = {"linear", "addmm", "matmul", "mm", "bmm", "baddbmm", "addmv", "mv"}
SDPA_OPS = {"scaled_dot_product_attention", "softmax", "_softmax", "_safe_softmax",
            "_scaled_dot_product_efficient_attention", "_scaled_dot_product_flash_attention",
            "_scaled_dot_product_cudnn_attention"}
LOSS_OPS = {"cross_entropy_loss", "log_softmax", "_log_softmax", "nll_loss", "nll_loss_nd", "nll_loss2d"}
CAST_OPS = {"to", "_to_copy", "type_as"}
CACHE_OPS = {"cat", "lift_fresh", "empty", "detach_", "stack"}


def op_category(name, module):
    """Category of an operator called from Python (forward), from its aten name and innermost module class."""
    n = name[6:] if name.startswith("aten::") else name
    mod = module or ""
    if "gelu" in mod.lower() or n == "gelu":
        return "gelu"
    if n in ("item", "_local_scalar_dense"):
        return "sync (.item) wait"
    if n in VIEW_OPS:
        return "views/reshape/permute"
    if "Loss" in mod or n in LOSS_OPS:
        return "loss"
    if n in LINEAR_OPS:
        return "linear/addmm"
    if n in ("layer_norm", "native_layer_norm"):
        return "layer_norm"
    if n in SDPA_OPS:
        return "softmax/SDPA"
    if n in ("dropout", "native_dropout", "feature_dropout"):
        return "dropout"
    if n in ("add", "add_"):
        return "add"
    if n == "embedding":
        return "embedding"
    if n in CAST_OPS:
        return "casts (explicit .to)"
    if n in CACHE_OPS:
        return "kv cache (cat, tensor([]))"
    if n in ("conv2d", "convolution", "_convolution", "cudnn_convolution"):
        return "conv"
    if n in ("batch_norm", "_batch_norm_impl_index", "native_batch_norm", "cudnn_batch_norm"):
        return "batch_norm"
    if n in ("relu", "relu_"):
        return "relu"
    if "pool" in n:
        return "pooling"
    return "other ops"


def node_category(node):
    """Category of an autograd node from its name (e.g. AddmmBackward0)."""
    n = node.split("::")[-1]
    if n.endswith("AccumulateGrad"):
        return "autograd: accumulate grad"
    if n.startswith(("Addmm", "Mm", "Bmm", "Linear", "Baddbmm", "Matmul", "Addmv", "Mv")):
        return "linear/addmm"
    if "LayerNorm" in n:
        return "layer_norm"
    if "ScaledDotProduct" in n or (n.startswith(("Softmax", "SafeSoftmax"))):
        return "softmax/SDPA"
    if "Dropout" in n:
        return "dropout"
    if "Gelu" in n:
        return "gelu"
    if n.startswith("AddBackward"):
        return "add"
    if n == "TBackward0" or n.startswith(("ViewBackward", "TransposeBackward", "PermuteBackward", "UnsafeView",
                                          "ReshapeAlias", "ExpandBackward", "SliceBackward", "SelectBackward",
                                          "SplitBackward", "SplitWithSizes", "UnsqueezeBackward", "SqueezeBackward",
                                          "CloneBackward", "AliasBackward", "AsStrided", "UnbindBackward")):
        return "views/reshape/permute"
    if n.startswith("ToCopyBackward"):
        return "casts (autocast, inside ops)"
    if "Embedding" in n:
        return "embedding"
    if n.startswith(("NllLoss", "LogSoftmax", "MeanBackward", "DivBackward")):
        return "loss"
    if n.startswith(("ConvolutionBackward", "CudnnConvolution")):
        return "conv"
    if "BatchNorm" in n:
        return "batch_norm"
    if "Relu" in n or "Threshold" in n:
        return "relu"
    if "Pool" in n:
        return "pooling"
    return "other ops"


# ---------------------------------------------------------------------------------------------------------------
# measuring (GPU machine)
def per_call_us(body, n=2000, rounds=5):
    best = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            body()
        best.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(best)


def micro_extra(torch):
    x = torch.randn(4, 4, device=DEV)
    ident = torch.nn.Identity()
    drop = torch.nn.Dropout(0.1).eval()
    lin = torch.nn.Linear(4, 4, device=DEV)
    ln = torch.nn.LayerNorm(4, device=DEV)
    F = torch.nn.functional

    class Wrap(torch.nn.Module):  # a container module whose forward calls one child (a transformer block's nesting)
        def __init__(self):
            super().__init__()
            self.inner = torch.nn.Identity()

        def forward(self, a):
            return self.inner(a)

    wrap = Wrap()
    out = {}
    with torch.no_grad():
        out["module_call_identity_us"] = per_call_us(lambda: ident(x))
        out["module_call_container_of_identity_us"] = per_call_us(lambda: wrap(x))
        out["module_call_dropout_eval_us"] = per_call_us(lambda: drop(x))
        out["functional_dropout_eval_us"] = per_call_us(lambda: F.dropout(x, 0.1, False))
        out["permute_us"] = per_call_us(lambda: x.permute(1, 0))
        out["reshape_us"] = per_call_us(lambda: x.reshape(2, 8))
        out["contiguous_noop_us"] = per_call_us(lambda: x.contiguous())
        out["linear_module_no_grad_us"] = per_call_us(lambda: lin(x))
        out["functional_linear_no_grad_us"] = per_call_us(lambda: F.linear(x, lin.weight, lin.bias))
        out["layer_norm_module_no_grad_us"] = per_call_us(lambda: ln(x))
        out["tensor_from_empty_list_us"] = per_call_us(lambda: torch.tensor([]))
    out["linear_module_grad_us"] = per_call_us(lambda: lin(x))
    torch.cuda.synchronize()
    return out


def module_hooks(torch, counts):
    """Global module hooks that open a record_function per module call (attribution pass)."""
    stack = []

    def pre(mod, _args):
        if stack:
            stack[-1][1] = True
        rf = torch.profiler.record_function(MOD_MARK + type(mod).__name__)
        rf.__enter__()
        stack.append([type(mod).__name__, False, rf])

    def post(mod, _args, _out):
        if not stack:
            return
        name, had_child, rf = stack.pop()
        rf.__exit__(None, None, None)
        counts[("container" if had_child else "leaf", name)] += 1

    return (torch.nn.modules.module.register_module_forward_pre_hook(pre),
            torch.nn.modules.module.register_module_forward_hook(post))


def is_op(e):
    return e.name.startswith("aten::")


def under_op(e):
    p = e.cpu_parent
    while p is not None:
        if p.name.startswith(("aten::", "autograd::engine")):
            return True
        p = p.cpu_parent
    return False


def module_of(e):
    p = e.cpu_parent
    while p is not None:
        if p.name.startswith(MOD_MARK):
            return p.name[len(MOD_MARK):]
        p = p.cpu_parent
    return None


def marker_of(e, prefixes):
    p = e.cpu_parent
    while p is not None:
        for pre in prefixes:
            if p.name.startswith(pre):
                return pre
        p = p.cpu_parent
    return None


def subtree(e):
    out, todo = [], list(e.cpu_children)
    while todo:
        c = todo.pop()
        out.append(c)
        todo.extend(c.cpu_children)
    return out


def top_casts(e):
    """The top-most aten::to / aten::_to_copy under an operator (autocast's casts): count, µs."""
    n, us, todo = 0, 0.0, list(e.cpu_children)
    while todo:
        c = todo.pop()
        if c.name in ("aten::to", "aten::_to_copy"):
            n += 1
            us += c.time_range.end - c.time_range.start
        else:
            todo.extend(c.cpu_children)
    return n, us


def step_items(events, with_shapes=False, keep_events=False):
    """Per profiled step: the items (ops from Python, autograd nodes, engine-thread ops outside nodes) in time order
    with duration and gap before, and the step's wall time and event count."""
    marks = sorted((e for e in events if e.name == STEP_MARK), key=lambda e: e.time_range.start)
    if not marks:
        return []
    main = marks[0].thread
    steps = []
    for m in marks:
        s0, s1 = m.time_range.start, m.time_range.end
        inside = [e for e in events if s0 <= e.time_range.start <= s1 and e is not m]
        items = []
        for e in inside:
            if e.name.startswith(NODE_MARK):  # the backward engine's nodes (a device thread for CUDA tensors)
                items.append({"kind": "node", "e": e})
            elif is_op(e) and not under_op(e):
                if e.thread == main:
                    mk = marker_of(e, ("Optimizer.step#", "Optimizer.zero_grad#"))
                    items.append({"kind": "op", "e": e, "marker": mk})
                else:
                    items.append({"kind": "engine_op", "e": e})
        items.sort(key=lambda it: it["e"].time_range.start)
        nodes = [it for it in items if it["kind"] == "node"]
        bwd0 = nodes[0]["e"].time_range.start if nodes else None
        bwd1 = max(it["e"].time_range.end for it in nodes) if nodes else None
        frontier = s0
        out = []
        for it in items:
            e = it["e"]
            st, en = e.time_range.start, e.time_range.end
            gap = max(0.0, st - frontier)
            frontier = max(frontier, en)
            rec = {"name": e.name, "kind": it["kind"], "start": st - s0, "dur": en - st, "gap": gap,
                   "events": 1 + len(subtree(e))}
            if keep_events:
                rec["_e"] = e
            if it["kind"] == "op":
                if it["marker"] == "Optimizer.step#":
                    rec["phase"] = "optimizer"
                elif it["marker"] == "Optimizer.zero_grad#":
                    rec["phase"] = "zero_grad"
                elif bwd0 is None or st < bwd0:
                    rec["phase"] = "forward"
                else:
                    rec["phase"] = "after_backward"
                rec["casts_n"], rec["casts_us"] = top_casts(e)
                if with_shapes:
                    rec["shapes"] = str(getattr(e, "input_shapes", ""))[:160]
            else:
                rec["phase"] = "backward"
            out.append(rec)
        steps.append({"wall_us": s1 - s0, "tail_us": max(0.0, s1 - frontier), "items": out,
                      "cpu_events": len(inside), "backward_window_us": (bwd1 - bwd0) if nodes else 0.0,
                      "main_thread": main})
    return steps


def categorize(item, module):
    if item["kind"] == "node":
        return node_category(item["name"][len(NODE_MARK):].strip())
    if item["kind"] == "engine_op":
        return "autograd: engine gaps"
    ph = item["phase"]
    n = item["name"][6:]
    if n in ("item", "_local_scalar_dense") and ph != "optimizer":
        return "sync (.item) wait"
    if ph in ("optimizer", "zero_grad", "after_backward"):
        return "optimizer + scaler"
    return op_category(item["name"], module)


def summarize(steps, modules):
    """Per category and per name, averaged over the profiled steps (`modules`: the innermost module class of each
    operator called from Python, in order, from the attribution pass; None: name-only categories)."""
    n = len(steps)
    cat = collections.defaultdict(lambda: {"count": 0, "op_us": 0.0, "gap_us": 0.0, "events": 0})
    by_name = collections.defaultdict(lambda: {"count": 0, "us": 0.0, "gap_us": 0.0, "category": None, "casts": 0})
    other = collections.Counter()
    other_us = collections.Counter()
    shapes = collections.defaultdict(collections.Counter)
    for s in steps:
        op_index = 0
        for it in s["items"]:
            mod = None
            if it["kind"] == "op":
                if modules is not None and op_index < len(modules):
                    mod = modules[op_index]
                op_index += 1
            c = categorize(it, mod)
            gap = it["gap"]
            # where the Python glue goes: ops' gaps to "Python glue", nodes' gaps to the engine
            if it["kind"] == "op" and it["phase"] == "forward":
                cat["Python glue (gaps between ops)"]["op_us"] += gap
                cat["Python glue (gaps between ops)"]["count"] += 1
            elif it["kind"] == "op":  # the optimizer's and the scaler's Python (AdamW's per-tensor loop) is theirs
                cat["optimizer + scaler"]["op_us"] += gap
            else:
                cat["autograd: engine gaps"]["op_us"] += gap
            own = it["dur"]
            if it.get("casts_n"):
                own -= it["casts_us"]
                cc = cat["casts (autocast, inside ops)"]
                cc["count"] += it["casts_n"]
                cc["op_us"] += it["casts_us"]
            d = cat[c]
            d["count"] += 1
            d["op_us"] += own
            d["gap_us"] += gap
            d["events"] += it["events"]
            key = it["name"] if it["kind"] != "op" else f"{it['phase']}:{it['name']}"
            b = by_name[key]
            b["count"] += 1
            b["us"] += it["dur"]
            b["gap_us"] += gap
            b["category"] = c
            b["casts"] += it.get("casts_n", 0)
            if c == "other ops":
                other[f"{mod}:{it['name']}"] += 1
                other_us[f"{mod}:{it['name']}"] += it["dur"]
            if "shapes" in it and len(shapes[it["name"]]) < 50:
                shapes[it["name"]][it["shapes"]] += 1
        cat["Python glue (gaps between ops)"]["op_us"] += s["tail_us"]
    out_cat = {k: {"count": v["count"] / n, "us": v["op_us"] / n, "gap_before_us": v["gap_us"] / n,
                   "events": v["events"] / n} for k, v in cat.items()}
    out_name = {k: {"count": v["count"] / n, "us": v["us"] / n, "us_per_call": v["us"] / max(1, v["count"]),
                    "gap_before_us": v["gap_us"] / n, "category": v["category"],
                    "autocast_casts": v["casts"] / n}
                for k, v in sorted(by_name.items(), key=lambda kv: -kv[1]["us"])}
    return {"categories": out_cat, "by_name": out_name,
            "other_ops": {k: {"count": other[k] / n, "us": other_us[k] / n} for k in other},
            "shapes": {k: dict(v.most_common(3)) for k, v in shapes.items()}}


def profiled(torch, step, nsteps, record_shapes):
    walls = []
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                record_shapes=record_shapes) as prof:
        for _ in range(nsteps):
            t0 = time.perf_counter()
            with torch.profiler.record_function(STEP_MARK):
                step()
            walls.append(time.perf_counter() - t0)
            torch.cuda.synchronize()
    return prof.events(), walls


def host_walls(torch, step, steps):
    host = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        host.append(time.perf_counter() - t0)
        torch.cuda.synchronize()
    return host


def run_case(torch, es, spec, a):
    rec = {"id": spec["id"], "roofplan_command": spec["roofplan_command"]}
    t0 = time.monotonic()
    rec["precision_settings"], model, step, _ = es.warmed_step(spec, DEV, a.warmup)
    if hasattr(model, "config"):
        rec["attn_implementation"] = getattr(model.config, "_attn_implementation", None)
    host = host_walls(torch, step, a.steps)
    rec["host_s_median"] = statistics.median(host)
    rec["host_s_p10"], rec["host_s_p90"] = es.rc_pct(host, 0.1), es.rc_pct(host, 0.9)

    # (e) attribution pass: innermost module of every op (one step, not timed)
    counts = collections.Counter()
    hooks = module_hooks(torch, counts)
    try:
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            with torch.profiler.record_function(STEP_MARK):
                step()
            torch.cuda.synchronize()
    finally:
        for h in hooks:
            h.remove()
    att = step_items(prof.events(), keep_events=True)[0]
    att_names = [it["name"] for it in att["items"] if it["kind"] == "op"]
    modules = [module_of(it["_e"]) for it in att["items"] if it["kind"] == "op"]
    rec["module_calls_per_step"] = {f"{k[0]}:{k[1]}": v for k, v in counts.most_common()}
    rec["module_calls_leaf"] = sum(v for k, v in counts.items() if k[0] == "leaf")
    rec["module_calls_container"] = sum(v for k, v in counts.items() if k[0] == "container")
    del prof

    # (b, c, d) interleaved rounds: --round-steps uninstrumented steps, a host-speed probe, then one profiled step
    # (CPU activity, no shapes); each round's profiled figures are scaled by that round's host time over its
    # profiled wall time, so that a slow spell of the host (seen on these leases) scales both alike
    x = torch.randn(4, 4, device=DEV)
    rounds = []
    for _ in range(a.rounds):
        h = host_walls(torch, step, a.round_steps)
        probe = per_call_us(lambda: x.view(16), n=2000, rounds=1)
        events, _w = profiled(torch, step, 1, False)
        st = step_items(events)[0]
        del events
        hm = statistics.median(h)
        rounds.append({"host_s_median": hm, "profiled_wall_us": st["wall_us"], "scale": hm * 1e6 / st["wall_us"],
                       "view_probe_us": probe, "cpu_events": st["cpu_events"], "step": st})
    names0 = [it["name"] for it in rounds[0]["step"]["items"] if it["kind"] == "op"]
    aligned = names0 == att_names
    rec["attribution_aligned"] = aligned
    if not aligned:  # ops align by position only if the sequences match; else name-only categories
        rec["attribution_mismatch"] = {"timed_items": len(names0), "attribution_items": len(att_names)}
    mods = modules if aligned else None
    steps = [r["step"] for r in rounds]
    rec["profiled"] = summarize(steps, mods)  # raw, mean over the rounds' profiled steps
    per_round = [summarize([r["step"]], mods)["categories"] for r in rounds]
    keys = sorted(set().union(*per_round))
    zero = {"count": 0.0, "us": 0.0, "gap_before_us": 0.0}
    rec["categories"] = {k: {
        "count": statistics.median(pr.get(k, zero)["count"] for pr in per_round),
        "us_raw": statistics.median(pr.get(k, zero)["us"] for pr in per_round),
        "us_scaled": statistics.median(pr.get(k, zero)["us"] * r["scale"] for pr, r in zip(per_round, rounds)),
        "gap_before_us_scaled": statistics.median(pr.get(k, zero)["gap_before_us"] * r["scale"]
                                                  for pr, r in zip(per_round, rounds))} for k in keys}
    rec["rounds"] = [{k: v for k, v in r.items() if k != "step"} for r in rounds]
    rec["cpu_events_per_step"] = statistics.mean(s["cpu_events"] for s in steps)
    rec["backward_window_us"] = statistics.mean(s["backward_window_us"] for s in steps)
    rec["items_per_step"] = statistics.mean(len(s["items"]) for s in steps)
    del steps, rounds
    # record_shapes (the shapes of the operators; its wall time shows what recording shapes adds)
    events, walls = profiled(torch, step, 2, True)
    st = step_items(events, with_shapes=True)
    del events
    rec["record_shapes"] = {"wall_us": [s["wall_us"] for s in st], "shapes": summarize(st, mods)["shapes"]}
    del st
    host2 = host_walls(torch, step, a.steps)
    rec["host_s_median_after"] = statistics.median(host2)
    ref = statistics.median(host + host2)
    rec["host_s_median_all"] = ref
    rs = rec["rounds"]
    prof_med = statistics.median(r["profiled_wall_us"] for r in rs) / 1e6
    rec["profiler_overhead"] = {
        "profiled_wall_s_median": prof_med,
        "round_host_s_median": statistics.median(r["host_s_median"] for r in rs),
        "scale_median": statistics.median(r["scale"] for r in rs),
        "scale": statistics.median(r["scale"] for r in rs),
        "record_shapes_wall_s_median": statistics.median(rec["record_shapes"]["wall_us"]) / 1e6,
        "us_per_cpu_event": (prof_med - statistics.median(r["host_s_median"] for r in rs)) * 1e6 /
                            max(1.0, rec["cpu_events_per_step"])}
    rec["micro_probe_after"] = {"view_us": per_call_us(lambda: x.view(16)),
                                "module_call_identity_us": per_call_us(lambda: torch.nn.Identity()(x))}
    rec["wall_s"] = time.monotonic() - t0
    del model, step
    torch.cuda.empty_cache()
    return rec


def measure(a):
    import torch
    import e2e_suite as es
    import host_ops
    import rp_common as rc
    t0 = time.monotonic()
    torch.backends.cudnn.benchmark = True
    specs = {c["id"]: c for c in es.CASES}
    doc = {"tool": "roofplan-host-items", "schema": 1, "provenance": rc.provenance(a.git_sha),
           "method": {"steps": a.steps, "warmup": a.warmup, "rounds": a.rounds, "round_steps": a.round_steps,
                      "items": "aten ops with no enclosing aten op or autograd node on the Python thread; autograd "
                               "nodes on the engine thread; gap = time since the previous item ended"},
           "micro": dict(host_ops.micro(), **micro_extra(torch)), "cases": []}
    print(json.dumps(doc["micro"]), flush=True)
    for cid in [c for c in a.cases.split(",") if c]:
        try:
            doc["cases"].append(run_case(torch, es, specs[cid], a))
            r = doc["cases"][-1]
            print(json.dumps({"id": cid, "host_ms": r["host_s_median"] * 1e3, "host_ms_after":
                              r["host_s_median_after"] * 1e3, "aligned": r["attribution_aligned"],
                              "overhead": r["profiler_overhead"], "wall_s": r["wall_s"]}), flush=True)
            print(table_measured(r), flush=True)
        except Exception:  # noqa: BLE001
            doc["cases"].append({"id": cid, "error": traceback.format_exc()[-1500:]})
            print(doc["cases"][-1]["error"], flush=True)
        rc.write_json(a.json, doc)
    doc["wall_s"] = time.monotonic() - t0
    rc.write_json(a.json, doc)


def table_measured(r):
    po = r["profiler_overhead"]
    lines = [f"{r['id']}: host {r['host_s_median_all']*1e3:.2f} ms (before {r['host_s_median']*1e3:.2f}, after "
             f"{r['host_s_median_after']*1e3:.2f}), rounds: host {po['round_host_s_median']*1e3:.2f} ms, profiled "
             f"{po['profiled_wall_s_median']*1e3:.2f} ms, scale {po['scale']:.3f}, shapes "
             f"{po['record_shapes_wall_s_median']*1e3:.2f} ms",
             "| category | n/step | µs raw | µs scaled | gap-before µs scaled |", "|---|---|---|---|---|"]
    for k, v in sorted(r["categories"].items(), key=lambda kv: -kv[1]["us_scaled"]):
        lines.append(f"| {k} | {v['count']:.0f} | {v['us_raw']:.0f} | {v['us_scaled']:.0f} | "
                     f"{v['gap_before_us_scaled']:.0f} |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------------
# the prediction's host cost per category (from a host_cost_dump.cpp dump of the kernels)
def pred_category(k, layer_cat):
    what, part, layer = k["what"], k["part"], k["layer"]
    if part == "optimizer":
        return "optimizer + scaler"
    if what.startswith("cast") or what.startswith("cast "):
        return "casts (autocast, inside ops)"
    if what == "accumulate gradient":
        return "autograd: accumulate grad"
    if layer == "loss":
        return "loss"
    if what == "heads contiguous":
        return "views/reshape/permute"
    if what.startswith("kv cache"):
        return "kv cache (cat, tensor([]))"
    if what.startswith("gelu") or layer.endswith(".gelu") or layer.endswith(".act") or \
            (what == "activation backward" and "gelu" in layer):
        return "gelu"
    if "attention" in what or what == "unpack dropout seed":
        return "softmax/SDPA"
    if "projection" in what or what.startswith("linear") or what in ("bias gradient", "reduction semaphores"):
        return "linear/addmm"
    if what.startswith("layer norm"):
        return "layer_norm"
    if "dropout" in what:
        return "dropout"
    if what == "add":
        return "add"
    if "embedding" in layer or what == "embedding":
        return "embedding"
    if what.startswith("conv"):
        return "conv"
    if what.startswith("batch norm"):
        return "batch_norm"
    if what == "relu" or (what == "activation backward" and "relu" in layer):
        return "relu"
    if "pool" in what:
        return "pooling"
    return layer_cat or "other ops"


def predicted_categories(dump):
    h = dump["host_costs"]
    cat = collections.defaultdict(lambda: {"count": 0.0, "us": 0.0, "launches": 0.0})
    # the category of a layer (node and part): that of its first kernel that is not a cast
    layer_cat = {}
    for k in dump["kernels"]:
        if not k["what"].startswith("cast"):
            layer_cat.setdefault((k["layer"], k["part"]), pred_category(k, None))
    for k in dump["kernels"]:
        c = pred_category(k, None)
        own = layer_cat.get((k["layer"], k["part"]), c)
        host, part = k["host"], k["part"]
        L = k["launches"] * h["launch_s"]
        base = 0.0
        if host == 5:  # a graph's launch: torch.compile's call into it (call 3), or an engine's raw launch
            base = dump["host_costs"].get("compiled_graph_call_s" if k["call"] == 3 else "graph_s", 0.0)
        elif k["call"] == 1:  # batch norm's own costs
            base = {1: h.get("batch_norm_forward_s", 0), 3: h.get("batch_norm_backward_s", 0)}.get(host, 0.0)
        elif host == 0:
            base = h["backward_s"] if part == "backward" else 0.0
        elif host == 1:
            base = h["module_s"]
        elif host == 2:
            base = 0.0 if k["call"] == 2 else h["internal_s"]
        elif host == 3:
            base = h["backward_s"]
        elif host == 4:
            base = h["optimizer_s"]
        cast = h["cast_s"] if k["call"] == 2 else 0.0
        ac = h["autocast_s"] if k["autocast_op"] else 0.0
        tens = k["host_tensors"] * (h["adam_per_tensor_s"] if k["adam"] else h["per_tensor_s"])
        parts = [
            # the operator's own call (a cast issued first by a module call carries the module's cost: the layer's)
            (own if (k["call"] == 2 and host == 1) else c, base + ac + (0 if k["call"] == 2 else L),
             1 if host != 0 or part == "backward" else 0),
            ("casts (autocast, inside ops)", cast + (L if k["call"] == 2 else 0), 1 if k["call"] == 2 else 0),
            ("views/reshape/permute", k["views"] * h["view_s"], k["views"]),
            ("Python glue (gaps between ops)", k["containers"] * h["container_s"], k["containers"]),
            ("views/reshape/permute", k["silent"] * h["silent_node_s"], 0),
            ("optimizer + scaler", tens, 0),
        ]
        for name, us, n in parts:
            if us or n:
                cat[name]["us"] += us * 1e6
                cat[name]["count"] += n
        if k["sync_before"]:
            wait = k["dissue_s"] - k["host_cost_s"]
            cat["sync (.item) wait"]["us"] += wait * 1e6
            cat["sync (.item) wait"]["count"] += 1
        cat[c]["launches"] += k["launches"]
    return {k: dict(v) for k, v in cat.items()}


def compare(a):
    meas = json.load(open(a.measured))
    preds = dict(p.split("=", 1) for p in a.predicted)
    out = []
    for r in meas["cases"]:
        if "error" in r or r["id"] not in preds:
            continue
        dump = json.load(open(preds[r["id"]]))
        pc = predicted_categories(dump)
        mc = r["categories"]
        po = r["profiler_overhead"]
        # this lease's host ran in two speed states (a view op 1.2-1.5 µs or 2.3-2.8 µs in a loop, switching within
        # seconds): the fast state's host time is the median of the rounds whose probe was fast; the measured
        # categories are also given normalised to it (each category's share of the scaled sum times that time)
        fast = [x["host_s_median"] for x in r["rounds"] if x["view_probe_us"] < a.fast_probe_us]
        h_fast = statistics.median(fast) if fast else r["host_s_median_all"]
        # an operator whose time belongs to the profiler (BERT's token-type aten::gather, early in the step: a one-off
        # cost per profiler session, 2.4 ms raw with one profiled step per session, 0.73 ms with five): its time
        # above --artifact-floor-us per call is taken out of its category before normalising
        mc = {k: dict(v) for k, v in mc.items()}
        art = r["profiled"]["by_name"].get(a.artifact)
        artifact_us = 0.0
        if art and art["us_per_call"] > a.artifact_floor_us:
            artifact_us = (art["us_per_call"] - a.artifact_floor_us) * art["count"] * po["scale"]
            mc[art["category"]]["us_scaled"] -= artifact_us
        total_scaled = sum(v["us_scaled"] for v in mc.values())
        norm = h_fast * 1e6 / total_scaled
        # a second estimate: the profiler's cost taken out per recorded event instead of in proportion (an item's
        # own start/end records fall in the gaps around it, its nested events' inside it; a cast under autocast
        # is counted as its 4 events, aten::to, _to_copy, empty_strided, copy_, moved from its operator), the
        # overhead per event set so that the sum is the rounds' uninstrumented host time, then normalised
        mean = {k: dict(v) for k, v in r["profiled"]["categories"].items()}
        if art and artifact_us:
            mean[art["category"]]["us"] -= (art["us_per_call"] - a.artifact_floor_us) * art["count"]
        items = sum(v["count"] for k, v in mean.items() if k not in ("Python glue (gaps between ops)",
                                                                     "autograd: engine gaps",
                                                                     "casts (autocast, inside ops)"))
        cast = mean.get("casts (autocast, inside ops)")
        ev = {k: max(0.0, v.get("events", 0.0) - v["count"]) for k, v in mean.items()}
        if cast:
            moved = 4 * cast["count"]
            ev["casts (autocast, inside ops)"] = moved
            for k in sorted(ev, key=lambda k: -ev[k]):
                if k != "casts (autocast, inside ops)" and moved > 0:
                    take = min(moved, ev[k])
                    ev[k] -= take
                    moved -= take
        ev["Python glue (gaps between ops)"] = items
        raw_total = sum(v["us"] for v in mean.values())
        ovh = max(0.0, (raw_total - po["round_host_s_median"] * 1e6) / max(1.0, sum(ev.values())))
        corr = {k: max(0.0, v["us"] - ev.get(k, 0.0) * ovh) for k, v in mean.items()}
        corr_norm = h_fast * 1e6 / max(1.0, sum(corr.values()))
        out.append(f"\n### {r['id']}\n")
        out.append(f"Measured host {r['host_s_median_all']*1e3:.2f} ms/step (uninstrumented median of "
                   f"{2 * meas['method']['steps']} steps: {r['host_s_median']*1e3:.2f} before, "
                   f"{r['host_s_median_after']*1e3:.2f} after the profiled rounds); rounds: host "
                   f"{po['round_host_s_median']*1e3:.2f} ms, profiled step {po['profiled_wall_s_median']*1e3:.2f} ms, "
                   f"scale {po['scale']:.3f}; fast-state host {h_fast*1e3:.2f} ms ({len(fast)} of {len(r['rounds'])} rounds "
                   f"with the probe under {a.fast_probe_us} µs), normalisation {norm:.3f}"
                   f"{f'; {a.artifact} taken out: {artifact_us:.0f} µs scaled' if artifact_us else ''}. Predicted "
                   f"{dump['host_s']*1e3:.2f} ms ({dump['kernel_count']} launches).\n")
        out.append(f"Per-event estimate: {ovh:.2f} µs of profiler per recorded event.\n")
        out.append("| category | n/step meas | n/step pred | µs meas raw | µs meas scaled | µs meas fast-state | "
                   "µs meas fast-state, per-event | µs pred | fast − pred | µs/call meas (fast) | µs/call pred |")
        out.append("|---|---|---|---|---|---|---|---|---|---|---|")
        keys = [c for c in CATEGORIES if c in mc or c in pc] + sorted((set(mc) | set(pc)) - set(CATEGORIES))
        tot = {"m": 0.0, "ms": 0.0, "p": 0.0, "f": 0.0}
        for c in keys:
            m = mc.get(c, {"count": 0, "us_raw": 0.0, "us_scaled": 0.0})
            p = pc.get(c, {"count": 0, "us": 0.0})
            tot["m"] += m["us_raw"]
            tot["ms"] += m["us_scaled"]
            tot["p"] += p["us"]
            f = m["us_scaled"] * norm
            tot["f"] += f
            per_m = f"{f / m['count']:.1f}" if m["count"] else ""
            per_p = f"{p['us'] / p['count']:.1f}" if p["count"] else ""
            pe = corr.get(c, 0.0) * corr_norm
            tot["pe"] = tot.get("pe", 0.0) + pe
            out.append(f"| {c} | {m['count']:.0f} | {p['count']:.0f} | {m['us_raw']:.0f} | {m['us_scaled']:.0f} | "
                       f"{f:.0f} | {pe:.0f} | {p['us']:.0f} | {f - p['us']:+.0f} | {per_m} | {per_p} |")
        out.append(f"| **sum** | | | {tot['m']:.0f} | {tot['ms']:.0f} | {tot['f']:.0f} | {tot['pe']:.0f} | {tot['p']:.0f} | "
                   f"{tot['f'] - tot['p']:+.0f} | | |")
        # by step part: forward (ops from Python and the glue between them), backward (autograd nodes and the
        # engine's gaps), optimizer (optimizer, zero_grad, GradScaler: ops and their Python, the .item() wait)
        meas_part = collections.Counter()
        for k, v in r["profiled"]["by_name"].items():
            us = v["us"] + v["gap_before_us"]
            if k == a.artifact and artifact_us:
                us -= artifact_us / po["scale"]
            if k.startswith("forward:"):
                meas_part["forward"] += us
            elif k.split(":")[0] in ("optimizer", "zero_grad", "after_backward"):
                meas_part["optimizer"] += us
            else:
                meas_part["backward"] += us
        raw_sum = sum(meas_part.values())
        pred_part = collections.Counter()
        for k in dump["kernels"]:
            pred_part[k["part"]] += k["host_cost_s"] * 1e6
            if k["sync_before"]:
                pred_part["optimizer"] += (k["dissue_s"] - k["host_cost_s"]) * 1e6
        out.append("\n| step part | measured µs (fast-state) | predicted µs | difference µs |\n|---|---|---|---|")
        for part in ("forward", "backward", "optimizer"):
            if meas_part[part] or pred_part[part]:
                m = meas_part[part] * h_fast * 1e6 / raw_sum
                out.append(f"| {part} | {m:.0f} | {pred_part[part]:.0f} | {m - pred_part[part]:+.0f} |")
        if pred_part["backward"]:  # training: each part's categories (glue and engine gaps as their own rows)
            f = h_fast * 1e6 / raw_sum
            out.append("\n| part: category | n meas | µs meas (fast-state) | µs pred | difference µs |\n|---|---|---|---|---|")
            # the forward's autocast casts: the casts category less the backward's ToCopyBackward nodes, shared among
            # the operators by their count of casts
            bn = r["profiled"]["by_name"]
            cast_cat = r["profiled"]["categories"].get("casts (autocast, inside ops)", {"us": 0.0})["us"]
            fwd_cast_us = cast_cat - sum(v["us"] for k, v in bn.items() if "ToCopyBackward" in k)
            fwd_cast_n = sum(v.get("autocast_casts", 0.0) for k, v in bn.items() if k.startswith("forward:"))
            for part in ("forward", "backward", "optimizer"):
                mp = collections.defaultdict(lambda: [0.0, 0.0])
                for k, v in r["profiled"]["by_name"].items():
                    kpart = "forward" if k.startswith("forward:") else "optimizer" if k.split(":")[0] in (
                        "optimizer", "zero_grad", "after_backward") else "backward"
                    if kpart != part:
                        continue
                    us = v["us"] - (artifact_us / po["scale"] if k == a.artifact and artifact_us else 0.0)
                    c = v["category"]
                    casts = v.get("autocast_casts", 0.0)
                    mp[c][0] += v["count"]
                    mp[c][1] += us
                    glue = "Python glue (gaps between ops)" if part == "forward" else \
                        "autograd: engine gaps" if part == "backward" else c
                    mp[glue][1] += v["gap_before_us"]
                    if part == "forward":
                        mp[glue][0] += v["count"]
                    if casts and part == "forward" and fwd_cast_n:  # the casts inside ops: their own row
                        share = fwd_cast_us * casts / fwd_cast_n
                        mp[c][1] -= share
                        mp["casts (autocast, inside ops)"][0] += casts
                        mp["casts (autocast, inside ops)"][1] += share
                pc = predicted_categories({"host_costs": dump["host_costs"],
                                           "kernels": [k for k in dump["kernels"] if k["part"] == part]})
                for c in sorted(set(mp) | set(pc), key=lambda c: -(mp[c][1] if c in mp else 0)):
                    m = mp.get(c, [0.0, 0.0])
                    p = pc.get(c, {"us": 0.0})
                    out.append(f"| {part}: {c} | {m[0]:.0f} | {m[1] * f:.0f} | {p['us']:.0f} | {m[1] * f - p['us']:+.0f} |")
    text = "\n".join(out) + "\n"
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)
    print(text)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--json", required=True)
    m.add_argument("--git-sha", default="unknown")
    m.add_argument("--cases", default=",".join(DEFAULT))
    m.add_argument("--steps", type=int, default=50)
    m.add_argument("--warmup", type=int, default=8)
    m.add_argument("--rounds", type=int, default=8, help="interleaved rounds, one profiled step each")
    m.add_argument("--round-steps", type=int, default=10, help="uninstrumented steps per round")
    c = sub.add_parser("compare")
    c.add_argument("--measured", required=True)
    c.add_argument("--predicted", nargs="+", required=True, help="case-id=dump.json (host_cost_dump.cpp)")
    c.add_argument("--md", default="")
    c.add_argument("--artifact", default="forward:aten::gather", help="by_name key of a profiler-artifact operator")
    c.add_argument("--artifact-floor-us", type=float, default=30.0)
    c.add_argument("--fast-probe-us", type=float, default=1.6,
                   help="rounds whose view-op probe ran under this many µs count as the host's fast state")
    a = p.parse_args()
    if a.cmd == "measure":
        measure(a)
    else:
        compare(a)


if __name__ == "__main__":
    main()
