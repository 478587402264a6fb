#!/usr/bin/env python3
"""Markdown tables from recorded roofplan-ops and roofplan-e2e-suite reports (the tables of docs/eager-lowering.md
and validation/results/README.md are printed by this script; nothing here measures or fits anything).

  python3 validation/ops/summarize.py --ops validation/results/2026-11-23-h200-ops/ops_inner_h200.json \
      --ops-events validation/results/2026-11-23-h200-ops/ops_h200.json \
      --e2e validation/results/2026-11-23-h200-e2e/e2e_eager_h200.json \
            validation/results/2026-11-23-h200-e2e/e2e_eager_rerun_h200.json \
            validation/results/2026-11-23-h200-e2e/e2e_compiled_h200.json [--section NAME]
Sections: bandwidth, fraction, floor, host, gemm, kernels, e2e, memory (default: all).
Pure standard library: runs on any python3.
"""
import argparse
import json
import re
import statistics

COPY_GB_S = 4158.4  # H200 copy kernel, 512 MiB, read+write (validation/results/2026-11-21-h200/bandwidth_h200.json)
SIZES = [64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20, 1 << 30]


def load(path):
    with open(path) as f:
        return json.load(f)


def short(name):
    """A readable kernel name: the kernel's identifier plus the functor or lambda owner that says what it does."""
    n = name.replace("(anonymous namespace)::", "")
    if n.startswith("void "):
        n = n[5:]
    base = re.split(r"[<(]", n, 1)[0].split("::")[-1]
    if base.startswith("_ZN"):  # mangled CUTLASS/cuDNN names
        m = re.search(r"(Conv2d\w+?)(?:Tile|Iterator)|(Wgrad|Fprop|Dgrad)", n)
        return "cutlass_conv(" + (m.group(0) if m else "mangled") + ")"
    hint = re.findall(r"(\w+Functor\w*|\w+_kernel_cuda|\w+_kernel_impl|\w+KernelImpl|launch_\w+|\w+Epilogue|"
                      r"\w+_functor|Fused\w+|\w+Op<|Metadata<\d>)", n)
    hint = [h.rstrip("<") for h in hint if h.split("::")[-1] != base][:2]
    return base + ("[" + ",".join(hint) + "]" if hint else "")


def key(c):
    return (c["op"], c["pass"], c["dtype"], c["layout"])


def nearest(sizes_bytes, target):
    return min(range(len(sizes_bytes)), key=lambda i: abs(sizes_bytes[i] / target - 1))


def families(cases):
    fam = {}
    for c in cases:
        if c.get("op") in ("gemm", "sdpa") or c.get("median_s") is None:
            continue
        fam.setdefault(key(c), []).append(c)
    return fam


def t_bandwidth(ops):
    """Achieved GB/s (nominal bytes / back-to-back GPU time per call) at every measured size of each family."""
    out = ["| op | pass | dtype | layout | kernels/call | nominal bytes: GB/s (smallest to largest) |",
           "|---|---|---|---|---|---|"]
    for k, cs in families(ops["cases"]).items():
        if k[0] in ("sgd_step", "adamw_step", "embedding"):
            continue
        cs = sorted(cs, key=lambda c: c["bytes"])
        shp = (lambda c: "(" + "x".join(map(str, c["shape"])) + ")") if k[0] in ("batch_norm_train", "softmax") \
            else (lambda c: "")
        pts = " ".join(f"{fmt_bytes(c['bytes'])}{shp(c)}: {c['bytes'] / c['median_s'] / 1e9:.0f}" for c in cs)
        kc = sorted({round(c.get("kernel_count", 0), 1) for c in cs})
        out.append(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {'/'.join(f'{x:g}' for x in kc)} | {pts} |")
    return "\n".join(out)


def fmt_bytes(b):
    b = int(b)
    return (f"{b / 2**30:.2g}G" if b >= 1 << 30 else f"{b / 2**20:.3g}M" if b >= 1 << 20 else
            f"{b / 2**10:.3g}K")


def t_fraction(ops):
    """At the largest size of each family: GB/s by kernel busy time and its fraction of the copy bandwidth."""
    out = ["| op | pass | dtype | layout | bytes (nominal) | GPU time/call (us) | kernel busy (us) | GB/s (busy) | "
           "fraction of copy (4158 GB/s) |", "|---|---|---|---|---|---|---|---|---|"]
    for k, cs in families(ops["cases"]).items():
        c = max(cs, key=lambda c: c["bytes"])
        bw = c["bytes"] / (c["kernel_busy_us"] * 1e-6) / 1e9
        out.append(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {c['bytes'] / 2**20:.0f} MiB "
                   f"{tuple(c['shape'])} | {c['median_s'] * 1e6:.1f} | {c['kernel_busy_us']:.1f} | {bw:.0f} | "
                   f"{bw / COPY_GB_S:.2f} |")
    return "\n".join(out)


def t_floor(ops, ops_ev):
    out = ["| measure | run | value |", "|---|---|---|"]
    for label, d in (("run 2 (--inner auto)", ops), ("run 1 (--inner 1)", ops_ev)):
        for f in d.get("floor", []):
            out.append(f"| back-to-back eager kernels, {f['numel']} fp32 elements ({fmt_bytes(f['bytes_per_kernel'])}"
                       f" moved) | {label} | {f['eager_back_to_back_us_per_kernel']:.2f} us per kernel |")
            out.append(f"| same kernels replayed in one CUDA graph | {label} | {f['cuda_graph_us_per_kernel']:.2f} us "
                       f"per kernel |")
    for label, d in (("run 2", ops), ("run 1", ops_ev)):
        small = [c for c in d["cases"] if c.get("op") in ("relu", "add", "mul", "tanh", "silu", "gelu", "zero_")
                 and c.get("bytes", 1 << 40) <= 300 << 10 and c.get("kernel_busy_us")]
        if small:
            out.append(f"| profiler duration of one tiny elementwise kernel (<= 256 KiB), median of "
                       f"{len(small)} cases | {label} | {statistics.median(c['kernel_busy_us'] for c in small):.2f} us |")
            out.append(f"| GPU time per call of those ops ({'back to back' if label == 'run 2' else 'one call between two events'}) "
                       f"| {label} | {statistics.median(c['median_s'] for c in small) * 1e6:.2f} us |")
    return "\n".join(out)


def t_host(ops, ops_ev):
    a = {h["case"]: h for h in ops_ev.get("host", [])}
    b = {h["case"]: h for h in ops.get("host", [])}
    out = ["| host operation | us per op, run 1 | us per op, run 2 | kernels per op | GPU busy us per op |",
           "|---|---|---|---|---|"]
    for name in a:
        x, y = a[name], b.get(name, {})
        kp = x.get("kernels_per_op")
        gb = x.get("gpu_busy_us_per_op")
        out.append(f"| {name} | {x.get('wall_us_per_op', float('nan')):.1f} | {y.get('wall_us_per_op', float('nan')):.1f} |"
                   f" {'' if kp is None else f'{kp:g}'} | {'' if gb is None else f'{gb:.1f}'} |")
    return "\n".join(out)


def t_gemm(ops_ev):
    g = {}
    for c in ops_ev["cases"]:
        if c.get("op") == "gemm" and c.get("median_s"):
            g[(c["pair"], c["pass"], c["dtype"], c["layout"])] = c
    out = ["| Linear (M x K -> N) | pass | GEMM m,n,k | dtype | misaligned us | TFLOP/s | aligned us | TFLOP/s | "
           "time ratio | misaligned kernel |", "|---|---|---|---|---|---|---|---|---|---|"]
    for (pair, ps, dt, lay), c in g.items():
        if lay != "misaligned":
            continue
        a = g.get((pair, ps, dt, "aligned"))
        if not a:
            continue
        M, K, N = c["linear_mkn"]
        M2, K2, N2 = a["linear_mkn"]
        out.append(f"| {M}x{K}->{N} vs {M2}x{K2}->{N2} | {ps} | {','.join(map(str, c['shape']))} | {dt} | "
                   f"{c['median_s'] * 1e6:.0f} | {c['tflops']:.0f} | {a['median_s'] * 1e6:.0f} | {a['tflops']:.0f} | "
                   f"{c['median_s'] / a['median_s']:.2f} | {short(c['kernels'][0]['name'])} |")
    return "\n".join(out)


def t_kernels(ops_ev):
    """Kernels per call for one representative size of each family (run 1)."""
    out = ["| op | pass | dtype | layout | shape | kernels/call | kernels (count x name, share of device time) |",
           "|---|---|---|---|---|---|---|"]
    for k, cs in families(ops_ev["cases"]).items():
        c = sorted(cs, key=lambda c: c["bytes"])[len(cs) // 2]
        tot = sum(x["time_us"] * 1 for x in c["kernels"]) or 1
        ks = "; ".join(f"{x['count']:g}x {short(x['name'])} ({100 * x['time_us'] / tot:.0f}%)" for x in c["kernels"])
        extra = f" [{c['bn_backend']}]" if c.get("bn_backend") else ""
        out.append(f"| {k[0]}{extra} | {k[1]} | {k[2]} | {k[3]} | {tuple(c['shape'])} | {c['kernel_count']:g} | {ks} |")
    for c in ops_ev["cases"]:
        if c.get("op") == "sdpa" and c["shape"][2] in (128, 1024) and c["dtype"] in ("bf16", "fp32"):
            tot = sum(x["time_us"] for x in c["kernels"]) or 1
            ks = "; ".join(f"{x['count']:g}x {short(x['name'])} ({100 * x['time_us'] / tot:.0f}%)" for x in c["kernels"])
            out.append(f"| sdpa | {c['pass']} | {c['dtype']} | {c['layout']} | {tuple(c['shape'])} | "
                       f"{c['kernel_count']:g} | {ks} |")
    return "\n".join(out)


def t_e2e(runs):
    out = ["| case | run | step ms (p10-p90) | samples/s | pipelined ms | host ms | kernels/step | GPU busy ms | "
           "idle share | top GPU classes (ms/step) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for label, d in runs:
        for r in d["results"]:
            if "error" in r or "skipped" in r:
                out.append(f"| {r['id']} | {label} | {r.get('error') or r.get('skipped')} |||||||")
                continue
            p = r["profile"]
            cl = sorted(p["class_time_s_per_step"].items(), key=lambda kv: -kv[1])[:4]
            out.append(f"| {r['id']} | {label} | {r['step_time_s_median'] * 1e3:.2f} ({r['step_time_s_p10'] * 1e3:.1f}-"
                       f"{r['step_time_s_p90'] * 1e3:.1f}) | {r['throughput_samples_per_s']:.0f} | "
                       f"{r['pipelined_step_s'] * 1e3:.2f} | {r['host_s_median'] * 1e3:.2f} | {p['kernels_per_step']:.0f}"
                       f" | {p['gpu_busy_s_per_step'] * 1e3:.2f} | {p['gpu_idle_share']:.2f} | "
                       + ", ".join(f"{c} {v * 1e3:.1f}" for c, v in cl) + " |")
    return "\n".join(out)


def t_memory(runs):
    out = ["| case | run | weights MiB | grads MiB | optimizer MiB | allocated at step start MiB | "
           "max allocated MiB | max reserved MiB | context+handles MiB (NVML - reserved) |",
           "|---|---|---|---|---|---|---|---|---|"]
    mb = 2 ** 20
    for label, d in runs:
        for r in d["results"]:
            m = r.get("memory")
            if not m:
                continue
            out.append(f"| {r['id']} | {label} | {m['weights_bytes'] / mb:.1f} | "
                       f"{m.get('gradients_bytes', 0) / mb:.1f} | {m.get('optimizer_state_bytes', 0) / mb:.1f} | "
                       f"{m['allocated_at_step_start_bytes'] / mb:.0f} | {m['max_allocated_bytes'] / mb:.0f} | "
                       f"{m['max_reserved_bytes'] / mb:.0f} | {m.get('context_and_handles_bytes_est', 0) / mb:.0f} |")
    return "\n".join(out)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ops", required=True, help="roofplan-ops report timed with --inner auto")
    p.add_argument("--ops-events", required=True, help="roofplan-ops report timed with --inner 1 (has GEMMs, SDPA)")
    p.add_argument("--e2e", nargs="*", default=[])
    p.add_argument("--section", default="all")
    a = p.parse_args()
    ops, ops_ev = load(a.ops), load(a.ops_events)
    runs = [(f.rsplit("/", 1)[-1].replace("_h200.json", ""), load(f)) for f in a.e2e]
    sections = {"bandwidth": lambda: t_bandwidth(ops), "fraction": lambda: t_fraction(ops),
                "floor": lambda: t_floor(ops, ops_ev), "host": lambda: t_host(ops, ops_ev),
                "gemm": lambda: t_gemm(ops_ev), "kernels": lambda: t_kernels(ops_ev),
                "e2e": lambda: t_e2e(runs), "memory": lambda: t_memory(runs)}
    for name, f in sections.items():
        if a.section in ("all", name):
            print(f"### {name}\n\n{f()}\n")


if __name__ == "__main__":
    main()
