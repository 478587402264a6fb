"""from_torch on Hugging Face transformers, captured where they are installed (torch 2.11, transformers 5.17 on
the device machines: validation/python/capture_hf.py; torch.fx cannot trace them there, torch.export can) and
recorded in validation/results/2026-11-24-h100-from-torch-dropout: each captured model has torch's parameter count,
the zoo's parameters and multiply-adds, and the zoo's dropout layers."""
import json
import os

import pytest

import roofplan

RECORDED = "validation/results/2026-11-24-h100-from-torch-dropout"


@pytest.mark.parametrize("model_id", ["bert-base", "bert-squad", "gpt2"])
def test_captured_transformers_match_the_zoo(source_dir, model_id):
    folder = os.path.join(source_dir, RECORDED)
    with open(os.path.join(folder, "capture_hf.json")) as f:
        case = json.load(f)["cases"][model_id]
    assert "error" not in case, case.get("error")
    captured = roofplan.load(os.path.join(folder, f"{model_id}.json"))
    zoo = roofplan.inspect(model_id).to_dict()
    assert captured.parameters == case["torch_params"] == zoo["params"]
    ours = captured.inspect().to_dict()
    assert ours["macs_per_sample"] == zoo["macs_per_sample"]
    # Dropout is a layer on the export route as on the fx route: as many as the zoo's model has.
    with open(os.path.join(folder, f"{model_id}.json")) as f:
        layers = json.load(f)["layers"]
    zoo_layers = json.loads(roofplan.zoo(model_id).to_json())["layers"]
    assert sum(x["type"] == "dropout" for x in layers) == sum(x["type"] == "dropout" for x in zoo_layers) == 25
    # What was left out computes no multiply-adds: masks, position arithmetic, constants.
    assert all(u["type"] not in ("linear", "addmm", "matmul", "conv2d") for u in case["unsupported"])
