#!/usr/bin/env python3
"""The SM clock, board power and power capping of each end-to-end case during its timed steps (validation only):
joins e2e_suite.py's report (each case's `timed_steps_utc` window and its host-speed probes) with an nvidia-smi
sampler that ran beside the suite:

  nvidia-smi -i 0 --query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.active \\
      --format=csv,noheader,nounits -lms 100 > clocks.csv &

  python3 validation/e2e/clocks_per_case.py --e2e e2e.json --samples clocks.csv [--md table.md] [--json out.json]

nvidia-smi's timestamps are the machine's local time (UTC on the device machines: check `date` there)."""
import argparse
import datetime
import json
import statistics
import sys


def read_samples(path):
    rows = []
    with open(path) as f:
        for line in f:
            parts = [p.strip() for p in line.split(",")]
            if len(parts) < 4 or line.startswith("#"):
                continue
            try:
                t = datetime.datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").replace(
                    tzinfo=datetime.timezone.utc).timestamp()
                rows.append((t, float(parts[1]), float(parts[2]), int(parts[3], 16)))
            except ValueError:
                continue  # a header, or "[N/A]"
    return rows


def per_case(e2e, samples):
    out = []
    for r in e2e["results"]:
        window = r.get("timed_steps_utc")
        if "error" in r or not window or len(window) != 2:
            continue
        inside = [s for s in samples if window[0] <= s[0] <= window[1]]
        rec = {"id": r["id"], "step_ms": r["step_time_s_median"] * 1e3, "timed_s": window[1] - window[0],
               "samples": len(inside), "host_probe_us": [r.get("host_probe_us_before"), r.get("host_probe_us_after")]}
        if inside:
            rec["sm_clock_mhz_median"] = statistics.median(s[1] for s in inside)
            rec["sm_clock_mhz_min"] = min(s[1] for s in inside)
            rec["power_w_median"] = statistics.median(s[2] for s in inside)
            rec["power_capped_share"] = sum(1 for s in inside if s[3] & 0x4) / len(inside)
        out.append(rec)
    return out


def markdown(rows):
    lines = ["| case | step ms | timed s | samples | SM clock median (min) MHz | power median W | SwPowerCap share | "
             "host probe us before / after |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        clock = (f"{r['sm_clock_mhz_median']:.0f} ({r['sm_clock_mhz_min']:.0f})" if "sm_clock_mhz_median" in r else "-")
        power = f"{r['power_w_median']:.0f}" if "power_w_median" in r else "-"
        cap = f"{r['power_capped_share']:.0%}" if "power_capped_share" in r else "-"
        probe = " / ".join(f"{p:.2f}" if p is not None else "-" for p in r["host_probe_us"])
        lines.append(f"| {r['id']} | {r['step_ms']:.2f} | {r['timed_s']:.2f} | {r['samples']} | {clock} | {power} | "
                     f"{cap} | {probe} |")
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--e2e", required=True)
    p.add_argument("--samples", required=True)
    p.add_argument("--md")
    p.add_argument("--json")
    a = p.parse_args()
    with open(a.e2e) as f:
        e2e = json.load(f)
    samples = read_samples(a.samples)
    if not samples:
        sys.exit(f"{a.samples}: no samples (expected nvidia-smi's csv,noheader,nounits lines)")
    rows = per_case(e2e, samples)
    text = markdown(rows)
    sys.stdout.write(text)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"tool": "roofplan-clocks-per-case", "e2e": a.e2e, "samples": a.samples, "cases": rows}, f,
                      indent=1)


if __name__ == "__main__":
    main()
