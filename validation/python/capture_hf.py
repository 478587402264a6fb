#!/usr/bin/env python3
"""from_torch on Hugging Face transformers where they are installed (the device machines: torch 2.x and
transformers; Debian's torch 1.13 has no transformers): captures BertModel (bert-base), BertForQuestionAnswering
(bert-squad) and GPT2LMHeadModel (gpt2) from their default configs (no weights
downloaded) with roofplan's capture (python/roofplan/_torch.py, loaded alone: it needs torch only) and writes each
roofplan-model/1 document with what was left out, the parameter count torch gives, and the versions.
python/tests/test_torch.py compares the recorded documents with roofplan's zoo.

  python3 validation/python/capture_hf.py OUT_DIR
"""
import importlib.util
import json
import os
import platform
import sys
import time
import traceback

import torch

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("rp_torch", os.path.join(here, "..", "..", "python", "roofplan",
                                                                          "_torch.py"))
rp_torch = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rp_torch)


def cases():
    import transformers as tf
    bert = tf.BertConfig()  # bert-base-uncased's shape
    gpt2 = tf.GPT2Config(use_cache=False)  # no KV cache object in the outputs (torch.export needs tensors)
    ids = lambda seq, *lead: torch.randint(0, 1000, (*lead, seq))
    return [
        ("bert-base", lambda: tf.BertModel(bert), (ids(128, 1),), None),
        ("bert-squad", lambda: tf.BertForQuestionAnswering(bert), (ids(384, 1),), None),
        # A decoder: captured, its SDPA gets the materialised causal mask (eager: is_causal=True).
        ("gpt2", lambda: tf.GPT2LMHeadModel(gpt2), (ids(1024, 1),), True),
    ]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    import transformers
    versions = {"torch": torch.__version__, "transformers": transformers.__version__,
                "python": platform.python_version(), "date": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())}
    summary = {"tool": "roofplan-capture-hf", "versions": versions, "cases": {}}
    for name, build, inputs, causal in cases():
        torch.manual_seed(0)
        module = build().eval()
        entry = {"torch_params": sum(p.numel() for p in module.parameters())}
        try:
            document, unsupported = rp_torch.capture(module, inputs, id=name, causal=causal)
            entry["causal"] = causal
            entry["unsupported"] = unsupported
            entry["layers"] = len(document["layers"])
            with open(os.path.join(out, f"{name}.json"), "w") as f:
                json.dump(document, f, indent=1)
        except Exception as e:  # recorded, not hidden: the test says which capture failed and why
            entry["error"] = f"{type(e).__name__}: {e}"
            entry["traceback"] = traceback.format_exc()[-3000:]
        summary["cases"][name] = entry
        print(name, {k: v for k, v in entry.items() if k != "traceback"}, flush=True)
    with open(os.path.join(out, "capture_hf.json"), "w") as f:
        json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
