#!/usr/bin/env python3
"""Writes the bad-input cases of tests/bad_input.cmake (issue 17) into a directory: files too large, too deep or too
long to check in, and variants of the checked-in device, system and profile files with one field broken.

    python3 tests/bad_input/make_inputs.py OUT_DIR
"""
import copy
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def write(out, name, text):
    with open(os.path.join(out, name), "w", encoding="utf-8") as f:
        f.write(text)


def write_json(out, name, document):
    write(out, name, json.dumps(document))


def device():
    with open(os.path.join(ROOT, "tests", "data", "custom_device.json"), encoding="utf-8") as f:
        return json.load(f)["devices"][0]


def system():
    with open(os.path.join(ROOT, "data", "systems.json"), encoding="utf-8") as f:
        s = json.load(f)["systems"][0]
    s = copy.deepcopy(s)
    s["id"] = "my-system"
    return s


def model(layers):
    return {"schema": "roofplan-model/1", "id": "m", "input": [16], "layers": layers}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    depth = 100_000
    # Nesting ~100k levels deep, in every file kind (was: a stack overflow).
    write(out, "deep.json", "[" * depth + "]" * depth)
    deep = "[" * depth + "]" * depth
    write(out, "deep_in_model.json", '{"schema": "roofplan-model/1", "id": ' + deep + "}")
    write(out, "deep_in_device.json", '{"devices": [{"id": ' + deep + "}]}")
    write(out, "deep_in_system.json", '{"systems": [{"id": ' + deep + "}]}")
    write(out, "deep_in_profile.json", '{"schema": "roofplan-profile/1", "vector": ' + deep + "}")
    # Long but legal inputs must read in linear time.
    layers = [{"name": f"fc{i}", "type": "linear", "out_features": 16} for i in range(99_999)]
    write_json(out, "model_99999_layers.json", model(layers))
    many = []
    for i in range(40_000):
        d = device()
        d["id"] = f"gpu-{i}"
        d["aliases"] = []
        many.append(d)
    write_json(out, "devices_40000.json", {"devices": many})
    # Device figures at the edges of doubles.
    for name, edit in {
        "device_peak_tiny": lambda d: d["peak"].__setitem__("fp32", 5e-324),
        "device_bandwidth_tiny": lambda d: d.__setitem__("bandwidth_gb_s", 5e-324),
        "device_memory_huge": lambda d: d.__setitem__("memory_gib", 1e15),
        "device_cc_text": lambda d: d.__setitem__("compute_capability", "9.x"),
        "device_unknown_field": lambda d: d.__setitem__("memory_gb", 80),
        "device_control_name": lambda d: d.__setitem__("name", "evil\u001b[2Jname"),
    }.items():
        d = device()
        edit(d)
        write_json(out, name + ".json", {"devices": [d]})
    write(out, "device_1e400.json", json.dumps({"devices": [device()]}).replace('"memory_gib": 64', '"memory_gib": 1e400'))
    write_json(out, "device_duplicate.json", {"devices": [device(), device()]})
    write_json(out, "device_unknown_top.json", {"schema": "roofplan-devices/1", "devices": [device()], "extra": 1})
    # Systems.
    s = system()
    s["nvlink_gb_s_per_lnk"] = 25
    write_json(out, "system_unknown_field.json", {"systems": [s]})
    write_json(out, "system_duplicate.json", {"systems": [system(), system()]})
    # Profiles.
    write(out, "profile_array.json", "[]")
    write_json(out, "profile_unknown_field.json", {"schema": "roofplan-profile/1", "gem": {"fp32": 0.9}})
    write_json(out, "profile_sm_side.json", {"schema": "roofplan-profile/1",
                                             "kernel_class": {"layer_norm": {"memory": 0.9, "sm_elements_per_cycle": -3}}})
    write_json(out, "profile_class_field.json", {"schema": "roofplan-profile/1",
                                                 "kernel_class": {"layer_norm": {"memory": 0.9, "sm_elements": 16}}})
    # A profile written before the SM side went by the element (2026-12-08).
    write_json(out, "profile_sm_bytes.json", {"schema": "roofplan-profile/1",
                                              "kernel_class": {"layer_norm": {"memory": 0.9, "sm_bytes_per_cycle": 16}}})
    # ... and one fitted before layer norm and the batch norms' other kernels got classes of their own.
    write_json(out, "profile_old_classes.json", {"schema": "roofplan-profile/1",
                                                 "kernel_class": {"normalization": {"memory": 0.44}, "batch_norm": {"memory": 0.36}}})
    # A model whose embedding is 2^31 x 2^31 (counts overflow 64 bits once multiplied by the batch).
    write_json(out, "model_huge_embedding.json",
               {"schema": "roofplan-model/1", "id": "huge", "input": [1],
                "layers": [{"name": "emb", "type": "embedding", "vocabulary": 2**31, "width": 2**31}]})
    write_json(out, "model_control_name.json", model([{"name": "fc\u001b[31m", "type": "linear", "out_features": 4}]))


if __name__ == "__main__":
    main()
