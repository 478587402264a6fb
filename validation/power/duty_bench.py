#!/usr/bin/env python3
"""SM clock and power when a compute-bound GEMM fills only part of the time (issue 16, item 5, follow-up).

clock_bench.py showed that back-to-back bf16 GEMMs (8192^3) hold the 700 W cap with the SM clock well under its
maximum, while a device copy does not reach the cap. A training step mixes both, so this script runs mixes:

  one block = [k back-to-back bf16 GEMMs 8192x8192x8192] then [m back-to-back dst.copy_(src) of 1 GiB bf16],

blocks back to back for --seconds (20) per setting. (k, m) are chosen from a short calibration at the start
(10 GEMMs and 10 copies timed with CUDA events at full clock) so that the GEMM part is about 100, 75, 50, 25, 10
and 0 % of a block of --block-ms (30; kept within 20..50 ms), so that the power manager sees the average. One
more setting, "long period", runs blocks of ~1 s (GEMMs for ~0.5 s then copies for ~0.5 s) to see whether the
clock follows each phase or the average.

No host synchronisation inside a setting's loop except, every ~--sync-s (0.5) of queued work, a wait on the end
event of the batch enqueued *before* the last one: the queue stays short and the GPU never drains.

Each block has three CUDA events (start, end of GEMMs, end of copies). Reported per setting, over the blocks that
start after --skip-seconds (3): achieved GEMM TFLOP/s (2*8192^3 * GEMM count / summed GEMM-part time), copy GB/s
(2 * bytes * copy count / summed copy-part time, read plus write), the measured GEMM share of the event wall time,
and from the nvidia-smi samples in the same window: median/p10/p90 SM clock, power, temperature and the
clock-event reasons seen. A --gap-seconds (5) idle pause precedes each setting; its clock and power are recorded.

Clocks, power limit and every other setting of the card are only *queried*; nothing is set and the GPU is never
reset. The sampler and the helpers are those of clock_bench.py (same folder).

Usage (on the device machine, from the repository root):
  python3 validation/power/duty_bench.py --json OUT.json --csv OUT.csv --git-sha SHA [--seconds 20]
"""
import argparse
import datetime
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clock_bench import (EVENT_REASON_BITS, EVENT_REASON_SOURCE, PROVENANCE_FIELDS, Sampler,  # noqa: E402
                         check_gemm, gpu_provenance, parse_samples, rel_err, smi_query, stats, summarize_window,
                         supported_fields)

SCHEMA = 1
TOOL = "roofplan-duty-bench"

# The fields of the brief, plus power.draw.instant where the driver has it (power.draw may be an average).
SAMPLER_FIELDS = ("timestamp", "clocks.sm", "power.draw", "power.draw.instant", "temperature.gpu",
                  "clocks_event_reasons.active")

GEMM_N = 8192
COPY_BYTES = 1 << 30  # 1 GiB per tensor, bf16
BF16_TOL = 1e-2
TARGET_SHARES = (1.0, 0.75, 0.5, 0.25, 0.10, 0.0)


# ----------------------------------------------------------------------------------------------------------------
# Pure helpers
# ----------------------------------------------------------------------------------------------------------------
def choose_km(share, tg_ms, tc_ms, block_ms, lo_ms, hi_ms):
    """(k, m) with the block k*tg + m*tc within [lo, hi] ms: of those whose GEMM share k*tg / block is within
    0.01 of `share`, the block closest to block_ms; if none, the share closest to `share`."""
    if share >= 1.0:
        return max(1, round(block_ms / tg_ms)), 0
    if share <= 0.0:
        return 0, max(1, round(block_ms / tc_ms))
    best = None
    for k in range(1, int(hi_ms / tg_ms) + 2):
        for m in range(1, int(hi_ms / tc_ms) + 2):
            t = k * tg_ms + m * tc_ms
            if not (lo_ms <= t <= hi_ms):
                continue
            err = abs(k * tg_ms / t - share)
            key = (err > 0.01, abs(t - block_ms) if err <= 0.01 else err)
            if best is None or key < best[0]:
                best = (key, k, m)
    if best is None:  # no block in range (very slow ops): fall back to the nearest ratio with k = 1
        return 1, max(1, round(tg_ms * (1 - share) / (share * tc_ms)))
    return best[1], best[2]


def stats_of(samples, key):
    return stats([s.get(key) for s in samples])


# ----------------------------------------------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", required=True, help="report path")
    ap.add_argument("--csv", required=True, help="raw nvidia-smi samples")
    ap.add_argument("--git-sha", default="unknown")
    ap.add_argument("--seconds", type=float, default=20.0, help="length of each setting")
    ap.add_argument("--gap-seconds", type=float, default=5.0, help="idle pause before each setting")
    ap.add_argument("--skip-seconds", type=float, default=3.0, help="skipped at each setting's start")
    ap.add_argument("--block-ms", type=float, default=30.0, help="target block length of the short settings")
    ap.add_argument("--long-phase-s", type=float, default=0.5, help="each phase of the long-period setting")
    ap.add_argument("--sync-s", type=float, default=0.5, help="queued work between host waits")
    ap.add_argument("--period-ms", type=int, default=100)
    ap.add_argument("--no-long", action="store_true", help="leave out the long-period setting")
    args = ap.parse_args()

    import torch  # noqa: E402

    if not torch.cuda.is_available():
        sys.exit("duty_bench: no CUDA device")
    for d in (os.path.dirname(os.path.abspath(args.json)), os.path.dirname(os.path.abspath(args.csv))):
        os.makedirs(d, exist_ok=True)

    prov_fields, prov_dropped = supported_fields(PROVENANCE_FIELDS)
    prov_vals, err = smi_query(prov_fields)
    smi = dict(zip(prov_fields, prov_vals)) if prov_vals else {"error": err}
    fields, dropped = supported_fields(SAMPLER_FIELDS)
    if "timestamp" not in fields:
        sys.exit("duty_bench: nvidia-smi refuses the timestamp field; cannot window samples")
    print(f"sampler fields: {','.join(fields)}; dropped: {dropped}", flush=True)

    flops = 2.0 * GEMM_N ** 3
    sampler = Sampler(fields, args.csv, args.period_ms)
    sampler.start()
    gaps, settings, checks, calib = [], [], {}, {}
    try:
        torch.cuda.init()
        torch.zeros(1, device="cuda")
        torch.cuda.synchronize()
        dev = torch.cuda.get_device_properties(0)
        torch.backends.cuda.matmul.allow_tf32 = False

        # --- correctness ---
        checks["bf16_1024_rel_err"] = check_gemm(torch, torch.bfloat16, 1024, BF16_TOL, "bf16")
        n_el = COPY_BYTES // 2
        src = torch.randn(n_el, device="cuda", dtype=torch.bfloat16)
        dst = torch.full((n_el,), float("nan"), device="cuda", dtype=torch.bfloat16)
        if (src == 0).all().item():
            raise RuntimeError("copy check: source is all zeros")
        dst.copy_(src)
        torch.cuda.synchronize()
        ok = torch.equal(dst, src)
        print(f"  check copy 1 GiB bf16: equal={ok}", flush=True)
        if not ok:
            raise RuntimeError("copy check: dst differs from src")
        checks["copy_equal"] = True

        a = torch.randn(GEMM_N, GEMM_N, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(GEMM_N, GEMM_N, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(GEMM_N, GEMM_N, device="cuda", dtype=torch.bfloat16)
        ref = a[:256].double() @ b.double()  # to check the last product of each setting

        def gemm():
            torch.matmul(a, b, out=c)

        def copy():
            dst.copy_(src)

        # --- calibration at full clock: warm-up, then 10 of each, one event pair per op ---
        for _ in range(3):
            gemm()
            copy()
        torch.cuda.synchronize()

        def time_ops(fn, n=10):
            evs = [torch.cuda.Event(enable_timing=True) for _ in range(n + 1)]
            evs[0].record()
            for i in range(n):
                fn()
                evs[i + 1].record()
            evs[-1].synchronize()
            return [evs[i].elapsed_time(evs[i + 1]) for i in range(n)]

        t0 = time.time()
        g_ms = time_ops(gemm)
        c_ms = time_ops(copy)
        tg = sum(g_ms) / len(g_ms)
        tc = sum(c_ms) / len(c_ms)
        calib = {"start_epoch": t0, "end_epoch": time.time(), "gemm_ms": g_ms, "copy_ms": c_ms,
                 "gemm_ms_mean": tg, "copy_ms_mean": tc, "gemm_tflops": flops / (tg * 1e-3) / 1e12,
                 "copy_gbs": 2 * COPY_BYTES / (tc * 1e-3) / 1e9}
        print(f"calibration: GEMM {tg:.3f} ms ({calib['gemm_tflops']:.0f} TFLOP/s), copy {tc:.3f} ms "
              f"({calib['copy_gbs']:.0f} GB/s)", flush=True)

        plan = []
        for s in TARGET_SHARES:
            k, m = choose_km(s, tg, tc, args.block_ms, 20.0, 50.0)
            plan.append({"name": f"share_{int(round(100 * s)):03d}", "intended_share": s, "k": k, "m": m,
                         "long_period": False})
        if not args.no_long:
            k = max(1, round(args.long_phase_s * 1e3 / tg))
            m = max(1, round(args.long_phase_s * 1e3 / tc))
            plan.append({"name": "long_050", "intended_share": 0.5, "k": k, "m": m, "long_period": True})
        for p in plan:
            p["block_ms_est"] = p["k"] * tg + p["m"] * tc
            p["share_est"] = p["k"] * tg / p["block_ms_est"]
            print(f"  {p['name']}: k={p['k']} m={p['m']} block ~{p['block_ms_est']:.1f} ms, "
                  f"share ~{p['share_est']:.3f}", flush=True)

        for p in plan:
            # --- idle gap ---
            torch.cuda.synchronize()
            g0 = time.time()
            time.sleep(args.gap_seconds)
            gaps.append({"before": p["name"], "start_epoch": g0, "end_epoch": time.time()})

            # --- setting ---
            print(f"{p['name']}: {args.seconds:.0f} s", flush=True)
            k, m = p["k"], p["m"]
            blocks = []  # (e0, e1, e2)
            torch.cuda.synchronize()
            anchor = torch.cuda.Event(enable_timing=True)
            t_anchor = time.time()
            anchor.record()
            t_end = time.perf_counter() + args.seconds
            queued_ms = 0.0
            prev_batch_end = None
            waits = 0
            while time.perf_counter() < t_end:
                e0 = torch.cuda.Event(enable_timing=True)
                e1 = torch.cuda.Event(enable_timing=True)
                e2 = torch.cuda.Event(enable_timing=True)
                e0.record()
                for _ in range(k):
                    gemm()
                e1.record()
                for _ in range(m):
                    copy()
                e2.record()
                blocks.append((e0, e1, e2))
                queued_ms += p["block_ms_est"]
                if queued_ms >= args.sync_s * 1e3:
                    if prev_batch_end is not None:
                        prev_batch_end.synchronize()  # the batch before this one; this one stays queued
                        waits += 1
                    prev_batch_end = e2
                    queued_ms = 0.0
            blocks[-1][2].synchronize()
            t_done = time.time()

            # Block times relative to the anchor (ms), and the parts.
            rows = []
            for e0, e1, e2 in blocks:
                s0 = anchor.elapsed_time(e0)
                rows.append((s0, e0.elapsed_time(e1), e1.elapsed_time(e2), anchor.elapsed_time(e2)))
            gpu_span_ms = rows[-1][3] - rows[0][0]
            post = [r for r in rows if r[0] >= args.skip_seconds * 1e3]
            if not post:
                raise RuntimeError(f"{p['name']}: no block started after {args.skip_seconds} s")
            g_sum = sum(r[1] for r in post)
            c_sum = sum(r[2] for r in post)
            span = post[-1][3] - post[0][0]
            nb = len(post)
            rec = dict(p)
            rec.update({
                "start_epoch": t_anchor, "end_epoch": t_done,
                "start_utc": datetime.datetime.fromtimestamp(t_anchor, datetime.timezone.utc).isoformat(),
                "blocks": len(rows), "blocks_after_skip": nb, "host_waits": waits,
                "gpu_span_s": gpu_span_ms / 1e3,
                "gpu_busy_fraction": sum(r[1] + r[2] for r in rows) / gpu_span_ms if gpu_span_ms > 0 else None,
                "after_skip": {
                    "span_s": span / 1e3,
                    "gemm_count": nb * k, "copy_count": nb * m,
                    "gemm_part_s": g_sum / 1e3, "copy_part_s": c_sum / 1e3,
                    "gemm_ms_per_op": (g_sum / (nb * k)) if k else None,
                    "copy_ms_per_op": (c_sum / (nb * m)) if m else None,
                    "gemm_tflops": (flops * nb * k / (g_sum * 1e-3) / 1e12) if k and g_sum > 0 else None,
                    "copy_gbs": (2 * COPY_BYTES * nb * m / (c_sum * 1e-3) / 1e9) if m and c_sum > 0 else None,
                    "measured_share": g_sum / span if span > 0 else None,
                    "block_ms": stats([r[1] + r[2] for r in post]),
                    "gemm_part_ms": stats([r[1] for r in post]) if k else None,
                    "copy_part_ms": stats([r[2] for r in post]) if m else None,
                },
                "calibration_ratio": {  # achieved per-op time over the full-clock calibration
                    "gemm": (g_sum / (nb * k)) / tg if k else None,
                    "copy": (c_sum / (nb * m)) / tc if m else None,
                },
            })
            # Window for the samples: the GPU timeline from anchor + skip to the last block's end.
            rec["window"] = {"start_epoch": t_anchor + args.skip_seconds,
                             "end_epoch": t_anchor + rows[-1][3] / 1e3}
            rec["_rows"] = rows  # kept for the long-period phase split, dropped or compacted below
            # Correctness of the last products of the setting.
            if k:
                e = rel_err(c[:256], ref)
                rec["post_check_gemm_rel_err"] = e
                if not (e <= BF16_TOL):
                    raise RuntimeError(f"{p['name']}: last GEMM rows 0..255 rel err {e:.3e} above {BF16_TOL}")
            if m:
                if not torch.equal(dst, src):
                    raise RuntimeError(f"{p['name']}: dst differs from src after the setting")
                rec["post_check_copy_equal"] = True
            settings.append(rec)
            ag = rec["after_skip"]
            print(f"  blocks {nb} (after skip), share {ag['measured_share']:.3f}, "
                  f"GEMM {ag['gemm_tflops'] or 0:.1f} TFLOP/s, copy {ag['copy_gbs'] or 0:.0f} GB/s", flush=True)
        time.sleep(1.0)  # one more sample after the last setting
    finally:
        rc = sampler.stop()

    samples = parse_samples(sampler.lines, fields)
    if not samples:
        sys.exit(f"duty_bench: no samples parsed (nvidia-smi rc {rc}, stderr: {sampler.stderr.strip()})")
    lags = []
    if len(sampler.recv_times) == len(sampler.lines):
        for line, tr in zip(sampler.lines, sampler.recv_times):
            q = parse_samples([line], fields)
            if q:
                lags.append(tr - q[0]["t"])

    def window_stats(t0, t1):
        w = summarize_window(samples, t0, t1)
        if "power.draw.instant" in fields:
            w["power_instant_w"] = stats_of([s for s in samples if t0 <= s["t"] < t1], "power.draw.instant")
        return w

    for g in gaps:
        g["stats"] = window_stats(g["start_epoch"], g["end_epoch"])
        g["stats_second_half"] = window_stats((g["start_epoch"] + g["end_epoch"]) / 2, g["end_epoch"])
    calib["stats"] = window_stats(calib["start_epoch"], calib["end_epoch"]) if calib else None

    max_sm = None
    try:
        max_sm = float(smi.get("clocks.max.sm"))
    except (TypeError, ValueError):
        pass
    for rec in settings:
        rows = rec.pop("_rows")
        w = rec["window"]
        rec["samples"] = window_stats(w["start_epoch"], w["end_epoch"])
        med = rec["samples"]["sm_clock_mhz"]["median"]
        rec["median_sm_clock_vs_max"] = (med / max_sm) if (med is not None and max_sm) else None
        if rec["long_period"]:
            # Each sample in the window -> the phase it falls in (GPU timeline mapped to host epoch through the
            # anchor); "settled" = at least 0.2 s into its phase.
            t_a = rec["start_epoch"]
            per = {"gemm": [], "copy": []}
            settled = {"gemm": [], "copy": []}
            tagged = []
            for s in samples:
                if not (w["start_epoch"] <= s["t"] < w["end_epoch"]):
                    continue
                x = (s["t"] - t_a) * 1e3
                for s0, gms, cms, _e in rows:
                    if s0 <= x < s0 + gms:
                        ph, into = "gemm", x - s0
                    elif s0 + gms <= x < s0 + gms + cms:
                        ph, into = "copy", x - s0 - gms
                    else:
                        continue
                    per[ph].append(s)
                    if into >= 200.0:
                        settled[ph].append(s)
                    tagged.append({"t_rel_s": round(x / 1e3, 3), "phase": ph, "into_ms": round(into, 1),
                                   "sm": s.get("clocks.sm"), "w": s.get("power.draw"),
                                   "w_inst": s.get("power.draw.instant"), "reasons": s.get("reasons")})
                    break
            rec["phase_split"] = {}
            for ph in ("gemm", "copy"):
                rec["phase_split"][ph] = {
                    "samples": len(per[ph]), "sm_clock_mhz": stats_of(per[ph], "clocks.sm"),
                    "power_w": stats_of(per[ph], "power.draw"),
                    "power_instant_w": stats_of(per[ph], "power.draw.instant"),
                    "settled_samples": len(settled[ph]),
                    "settled_sm_clock_mhz": stats_of(settled[ph], "clocks.sm"),
                    "settled_power_w": stats_of(settled[ph], "power.draw"),
                    "settled_power_instant_w": stats_of(settled[ph], "power.draw.instant"),
                    "reasons_seen": sorted({f"0x{s['reasons']:x}" for s in per[ph] if s.get("reasons") is not None}),
                }
            rec["phase_samples"] = tagged
            rec["block_series"] = [{"start_s": round(r[0] / 1e3, 3), "gemm_ms": round(r[1], 2),
                                    "copy_ms": round(r[2], 2),
                                    "gemm_tflops": (flops * rec["k"] / (r[1] * 1e-3) / 1e12) if r[1] > 0 else None,
                                    "copy_gbs": (2 * COPY_BYTES * rec["m"] / (r[2] * 1e-3) / 1e9)
                                    if r[2] > 0 else None} for r in rows]
        else:
            # Per-second summary of the GPU timeline (GEMM share and rates), for the shape over time.
            per_s = {}
            for s0, gms, cms, _e in rows:
                a_ = per_s.setdefault(int(s0 // 1000), [0, 0.0, 0.0])
                a_[0] += 1
                a_[1] += gms
                a_[2] += cms
            rec["per_second"] = [{"second": sec, "blocks": v[0], "gemm_ms": round(v[1], 2), "copy_ms": round(v[2], 2),
                                  "gemm_tflops": (flops * rec["k"] * v[0] / (v[1] * 1e-3) / 1e12)
                                  if rec["k"] and v[1] > 0 else None}
                                 for sec, v in sorted(per_s.items())]

    report = {
        "tool": TOOL,
        "schema": SCHEMA,
        "provenance": gpu_provenance(dev, smi, prov_dropped, args.git_sha),
        "sampler": {
            "command": sampler.cmd, "fields_used": fields, "fields_dropped": dropped,
            "period_ms": args.period_ms, "samples": len(samples), "lines": len(sampler.lines), "exit_code": rc,
            "stderr": sampler.stderr.strip()[-2000:], "csv": os.path.basename(args.csv),
            "timestamp_note": "nvidia-smi prints local time; parsed as local time of the same machine",
            "arrival_lag_s": stats(lags),
        },
        "event_reason_bits": {f"0x{b:x}": n for b, n in EVENT_REASON_BITS},
        "event_reason_source": EVENT_REASON_SOURCE,
        "parameters": {"seconds": args.seconds, "gap_seconds": args.gap_seconds, "skip_seconds": args.skip_seconds,
                       "block_ms": args.block_ms, "block_range_ms": [20.0, 50.0], "long_phase_s": args.long_phase_s,
                       "sync_s": args.sync_s, "gemm_n": GEMM_N, "gemm_dtype": "bfloat16",
                       "copy_bytes_per_tensor": COPY_BYTES, "copy_dtype": "bfloat16",
                       "gemm_flop": flops, "copy_bytes_read_plus_write": 2 * COPY_BYTES},
        "checks": checks,
        "calibration": calib,
        "idle_gaps": gaps,
        "settings": settings,
    }
    tmp = args.json + ".tmp"
    with open(tmp, "w") as f:
        json.dump(report, f, indent=1, allow_nan=False, default=str)
    os.replace(tmp, args.json)

    def fmt(x, p=0):
        return "-" if x is None else f"{x:.{p}f}"
    print(f"\n{'setting':10s} {'k':>4s} {'m':>4s} {'share i/m':>11s} {'TFLOP/s':>8s} {'GB/s':>6s} "
          f"{'SM med (p10-p90)':>18s} {'W med':>6s} {'Winst':>6s} {'C':>3s}  reasons")
    for g, rec in zip(gaps, settings):
        gs = g["stats_second_half"]
        print(f"{'  idle':10s} {'':>4s} {'':>4s} {'':>11s} {'':>8s} {'':>6s} "
              f"{fmt(gs['sm_clock_mhz']['median']):>18s} {fmt(gs['power_w']['median'], 1):>6s} "
              f"{fmt(gs.get('power_instant_w', {}).get('median'), 1):>6s} {fmt(gs['temperature_c']['median']):>3s}  "
              f"{[r['mask'][-4:] for r in gs['event_reasons']]}")
        s = rec["samples"]
        ag = rec["after_skip"]
        cl = s["sm_clock_mhz"]
        print(f"{rec['name']:10s} {rec['k']:>4d} {rec['m']:>4d} "
              f"{fmt(100 * rec['intended_share']):>4s}/{fmt(100 * ag['measured_share'], 1):>5s}% "
              f"{fmt(ag['gemm_tflops'], 1):>8s} {fmt(ag['copy_gbs']):>6s} "
              f"{fmt(cl['median']) + ' (' + fmt(cl['p10']) + '-' + fmt(cl['p90']) + ')':>18s} "
              f"{fmt(s['power_w']['median'], 1):>6s} {fmt(s.get('power_instant_w', {}).get('median'), 1):>6s} "
              f"{fmt(s['temperature_c']['median']):>3s}  "
              f"{['%s x%d' % (r['mask'][-4:], r['samples']) for r in s['event_reasons']]}")
        if rec["long_period"]:
            for ph in ("gemm", "copy"):
                q = rec["phase_split"][ph]
                print(f"    {ph} phase (>=0.2 s in): n={q['settled_samples']} SM "
                      f"{fmt(q['settled_sm_clock_mhz']['median'])} ({fmt(q['settled_sm_clock_mhz']['p10'])}-"
                      f"{fmt(q['settled_sm_clock_mhz']['p90'])}) W {fmt(q['settled_power_w']['median'], 1)} "
                      f"Winst {fmt(q['settled_power_instant_w']['median'], 1)} reasons {q['reasons_seen']}")
    print(f"wrote {args.json} and {args.csv} ({len(samples)} samples)")


if __name__ == "__main__":
    main()
