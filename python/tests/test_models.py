"""Models from the zoo, files and layers; the library checks them and its messages reach Python."""
import json
import os

import pytest

import roofplan


def test_zoo_model():
    m = roofplan.zoo("resnet50")
    assert m.parameters == 25_557_032 and m.layer_count == 175 and m.id == "resnet50"
    assert roofplan.zoo("bert-base", seq=384).size == 384


def test_layers_make_the_same_model_as_a_file(source_dir, cli):
    path = os.path.join(source_dir, "examples/models/tiny_cnn.json")
    with open(path) as f:
        document = json.load(f)
    built = roofplan.from_layers([roofplan.layer(l.pop("type"), l.pop("name"), **l) for l in document["layers"]],
                                 input=document["input"], id=document["id"])
    loaded = roofplan.load(path)
    assert built.parameters == loaded.parameters
    assert built.inspect().to_dict()["layers"] == cli("inspect", "--model-file", path, "--json")["layers"]
    # A model made in Python round-trips through roofplan-model/1.
    again = roofplan.from_json(built.to_json())
    assert again.parameters == built.parameters and again.layer_count == built.layer_count


def test_bad_layers_name_the_field():
    with pytest.raises(ValueError, match=r"layers\[0\]\.stirde: unknown field for type 'conv2d'; did you mean 'stride'"):
        roofplan.from_layers([roofplan.layer("conv2d", "c", out_channels=8, kernel=3, stirde=1)], input=[3, 32, 32])
    with pytest.raises(ValueError, match="out_channels"):
        roofplan.from_layers([roofplan.layer("conv2d", "c", kernel=3)], input=[3, 32, 32])
    with pytest.raises(ValueError, match="unknown model 'resnet5'; did you mean resnet50"):
        roofplan.zoo("resnet5")
    with pytest.raises(TypeError):
        roofplan.zoo(50)
    with pytest.raises(roofplan.RoofplanError, match=r"^--seq: must be an integer in \[1, 16777216\], got '-3'$"):
        roofplan.zoo("bert-base", seq=-3)


def test_predict_a_model_built_in_python(cli):
    m = roofplan.from_layers([roofplan.layer("linear", "fc1", out_features=4096),
                              roofplan.layer("gelu", "act"),
                              roofplan.layer("linear", "fc2", out_features=1024)], input=[128, 1024], id="mlp")
    p = roofplan.predict(m, device="h100-sxm", batch=32, precision="amp-bf16")
    assert p.model == "mlp" and p.flops_per_step > 0
    # Through the command (a system prediction) the same model is read from its file.
    s = roofplan.predict(m, system="dgx-h100", gpus=8, batch=32, precision="amp-bf16")
    assert s.model == "mlp" and s.to_dict()["gpus"] == 8


def test_version_and_catalogs():
    assert roofplan.__version__ == "0.1.0"
    assert os.path.exists(os.path.join(roofplan.data_dir, "devices.json"))
    assert os.path.exists(os.path.join(roofplan.data_dir, "systems.json"))
