"""Every subcommand from Python gives the figures of the roofplan binary for the same inputs (issue 18's bar:
at least 20 inputs), and Python's errors are the CLI's."""
import os

import pytest

import roofplan

# (Python call, the same command line).  Each Python result's to_dict() must equal the binary's --json output.
CASES = [
    (lambda: roofplan.models(), ["models"]),
    (lambda: roofplan.devices(), ["devices"]),
    (lambda: roofplan.systems(), ["systems"]),
    (lambda: roofplan.inspect("resnet50"), ["inspect", "--model", "resnet50"]),
    (lambda: roofplan.inspect("bert-base", seq=384, batch=8), ["inspect", "--model", "bert-base", "--seq", "384",
                                                                "--batch", "8"]),
    (lambda: roofplan.inspect(roofplan.zoo("vgg16", image_size=160)), ["inspect", "--model", "vgg16",
                                                                       "--image-size", "160"]),
    (lambda: roofplan.predict("resnet50", device="h100-sxm", batch=256, precision="amp-bf16"),
     ["predict", "--model", "resnet50", "--device", "h100-sxm", "--batch", "256", "--precision", "amp-bf16"]),
    (lambda: roofplan.predict("bert-squad", device="a100-sxm4-80gb", batch=32, precision="amp-fp16", optimizer="adam"),
     ["predict", "-m", "bert-squad", "-d", "a100-sxm4-80gb", "-b", "32", "-p", "amp-fp16", "--optimizer", "adam"]),
    (lambda: roofplan.predict("resnet18", device="h200", batch=16, mode="infer", precision="amp-fp16",
                              runtime="compiled"),
     ["predict", "-m", "resnet18", "-d", "h200", "-b", "16", "--mode", "infer", "-p", "amp-fp16", "--runtime",
      "compiled"]),
    (lambda: roofplan.predict("gpt2", device="h100-sxm", batch=8, seq=512, precision="tf32", kernels=True),
     ["predict", "-m", "gpt2", "-d", "h100-sxm", "-b", "8", "--seq", "512", "-p", "tf32", "--kernels"]),
    (lambda: roofplan.predict("resnet50", device="v100-sxm2-16gb", batch=64, runtime="ideal"),
     ["predict", "-m", "resnet50", "-d", "v100-sxm2-16gb", "-b", "64", "--runtime", "ideal"]),
    (lambda: roofplan.predict("resnet50", system="dgx-a100", gpus=8, batch=256, precision="amp-fp16"),
     ["predict", "-m", "resnet50", "--system", "dgx-a100", "--gpus", "8", "-b", "256", "-p", "amp-fp16"]),
    (lambda: roofplan.predict("resnet50", device="h100-sxm", batch=128, input_source="cpu-decode", loader_workers=8),
     ["predict", "-m", "resnet50", "-d", "h100-sxm", "-b", "128", "--input-source", "cpu-decode",
      "--loader-workers", "8"]),
    (lambda: roofplan.collective(op="all-reduce", system="dgx-h100", gpus=8, bytes="256MB"),
     ["collective", "--op", "all-reduce", "--system", "dgx-h100", "--gpus", "8", "--bytes", "256MB"]),
    (lambda: roofplan.roofline("resnet18", device="h100-sxm", batch=32),
     ["roofline", "-m", "resnet18", "-d", "h100-sxm", "-b", "32"]),
    (lambda: roofplan.compare("resnet50", systems=["dgx-a100", "dgx-h100"], gpus=8),
     ["compare", "-m", "resnet50", "--systems", "dgx-a100,dgx-h100", "--gpus", "8"]),
    (lambda: roofplan.scaling("bert-large", system="dgx-h100", gpus=[1, 2, 4, 8], precision="amp-bf16"),
     ["scaling", "-m", "bert-large", "--system", "dgx-h100", "--gpus", "1,2,4,8", "-p", "amp-bf16"]),
    (lambda: roofplan.explain(layer="conv2d cin=64 cout=64 k=3 p=1 h=56 w=56", device="h100-sxm", batch=32),
     ["explain", "--layer", "conv2d cin=64 cout=64 k=3 p=1 h=56 w=56", "--device", "h100-sxm", "--batch", "32"]),
    (lambda: roofplan.plan("resnet50", global_batch=1024, dataset=1281167, epochs=90, deadline=24),
     ["plan", "-m", "resnet50", "--global-batch", "1024", "--dataset", "1281167", "--epochs", "90", "--deadline",
      "24"]),
    (lambda: roofplan.predict("llama2-7b", device="h200", batch=1, seq=2048, mode="infer", precision="amp-bf16"),
     ["predict", "-m", "llama2-7b", "-d", "h200", "-b", "1", "--seq", "2048", "--mode", "infer", "-p", "amp-bf16"]),
    (lambda: roofplan.predict("resnet50", system="r740-p40", gpus=3, mode="infer", batch=64, precision="fp32"),
     ["predict", "-m", "resnet50", "--system", "r740-p40", "--gpus", "3", "--mode", "infer", "-b", "64", "-p", "fp32"]),
]


@pytest.mark.parametrize("index", range(len(CASES)), ids=[" ".join(c[1][:3]) for c in CASES])
def test_same_figures_as_the_binary(cli, index):
    call, args = CASES[index]
    result = call()
    expected = cli(*args, "--json", expect=result.exit_code)
    assert result.to_dict() == expected


def test_at_least_twenty_inputs_over_every_command():
    assert len(CASES) >= 20
    covered = {args[0] for _, args in CASES}
    # calibrate and validate read measurement reports: test_reports below.
    assert covered | {"calibrate", "validate"} == set(roofplan._core.command_names())


def test_calibrate_and_validate_from_recorded_reports(cli, source_dir):
    gemm = os.path.join(source_dir, "validation/results/2026-11-21-h200/gemm_h200.json")
    profile = roofplan.calibrate(gemm)
    assert profile.to_dict() == cli("calibrate", gemm, "--json")
    checked = roofplan.validate(gemm)
    assert checked.to_dict() == cli("validate", gemm, "--json", expect=checked.exit_code)


def test_results_are_typed_objects():
    p = roofplan.predict("resnet50", device="h100-sxm", batch=128, precision="amp-bf16")
    assert isinstance(p, roofplan.Prediction)
    assert p.step_time_s == p["step_time_s"] > 0
    assert p.memory.allocated_peak_bytes == p.to_dict()["memory"]["allocated_peak_bytes"]
    layers = p.layers
    assert isinstance(layers, roofplan.Table) and len(layers) == 174  # every layer with work (not flatten)
    assert layers[0]["name"] == "conv1"
    with pytest.raises(AttributeError, match="has no field 'no_such_field'"):
        p.no_such_field
    assert "<table>" in p._repr_html_() and "<table>" in layers._repr_html_()


@pytest.mark.parametrize("call, message", [
    (lambda: roofplan.predict("resnet50", device="h100-sxm", batch=-1), "--batch"),
    (lambda: roofplan.predict("resnet50", device="h100-sxm", batch=0), "--batch"),
    (lambda: roofplan.predict("resnet5", device="h100-sxm"), "did you mean resnet50"),
    (lambda: roofplan.predict("resnet50", device="h1000"), "h1000"),
    (lambda: roofplan.predict("resnet50", device="h100-sxm", precision="fp8"), "fp8"),
    (lambda: roofplan.predict("resnet50", device="h100-sxm", gpus=2), "--gpus"),
    (lambda: roofplan.collective(op="all-reduce", system="dgx-h100", gpus=0, bytes="1MB"), "--gpus"),
    (lambda: roofplan.inspect("resnet50", image_size=0), "--image-size"),
    (lambda: roofplan.predict("resnet50", device="h100-sxm", runtime="compiled", engine="on"), "--engine applies"),
])
def test_errors_are_the_clis(cli, call, message):
    with pytest.raises(roofplan.RoofplanError, match=message.replace("(", r"\(")) as raised:
        call()
    assert isinstance(raised.value, ValueError)


def test_python_mistakes_are_type_errors():
    with pytest.raises(TypeError, match="unexpected keyword argument 'bacth'"):
        roofplan.predict("resnet50", device="h100-sxm", bacth=8)
    with pytest.raises(TypeError, match="batch must be an int"):
        roofplan.predict("resnet50", device="h100-sxm", batch="8")
    with pytest.raises(TypeError, match="model must be a zoo id"):
        roofplan.predict(42, device="h100-sxm")
    with pytest.raises(TypeError, match="switch"):
        roofplan.predict("resnet50", device="h100-sxm", system="dgx-h100", no_overlap="yes")


def test_predict_fast_path_equals_the_command(cli):
    for kwargs, args in [
        (dict(batch=64, precision="amp-fp16", mode="train", optimizer="adam"),
         ["-b", "64", "-p", "amp-fp16", "--mode", "train", "--optimizer", "adam"]),
        (dict(batch=1, mode="infer"), ["-b", "1", "--mode", "infer"]),
        (dict(batch=32, runtime="compiled", cuda_graphs="off"), ["-b", "32", "--runtime", "compiled",
                                                                 "--cuda-graphs", "off"]),
        (dict(batch=32, context_gib=1.5), ["-b", "32", "--context-gib", "1.5"]),
        (dict(batch=16, precision="amp-fp16", mode="infer", runtime="compiled", engine="on"),
         ["-b", "16", "-p", "amp-fp16", "--mode", "infer", "--runtime", "compiled", "--engine", "on"]),
        (dict(batch=1, mode="infer", host_speed=1.8), ["-b", "1", "--mode", "infer", "--host-speed", "1.8"]),
    ]:
        p = roofplan.predict("resnet50", device="a100-pcie-80gb", **kwargs)
        assert isinstance(p, roofplan.Prediction)
        assert p.to_dict() == cli("predict", "-m", "resnet50", "-d", "a100-pcie-80gb", *args, "--json")
        assert p.to_dict().get("host_speed", 1) == kwargs.get("host_speed", 1)


def test_sweep_equals_single_predictions():
    model = roofplan.zoo("resnet50")
    records = roofplan.sweep(model, devices=["h100-sxm", "a100-sxm4-80gb", "t4"], batches=[1, 64, 256],
                             precisions=["amp-fp16", "int8"], modes=["infer"])
    assert len(records) == 3 * 3 * 2
    for r in records:
        if "error" in r:
            assert r["precision"] == "int8" and "int8" in r["error"]
            continue
        p = roofplan.predict(model, device=r["device"], batch=r["batch"], precision=r["precision"], mode=r["mode"])
        assert r["step_time_s"] == p.step_time_s and r["memory_bytes"] == p.memory_bytes and r["fits"] == p.fits
    assert any("error" not in r for r in records)


def test_sweep_without_memory_has_the_same_times():
    kwargs = dict(devices=["h100-sxm"], batches=[8, 64], precisions=["amp-bf16"], modes=["train", "infer"])
    full = roofplan.sweep("resnet50", **kwargs)
    quick = roofplan.sweep("resnet50", memory=False, **kwargs)
    for a, b in zip(full, quick):
        assert "memory_bytes" in a and "memory_bytes" not in b and "fits" not in b
        assert a["step_time_s"] == b["step_time_s"]


def test_a_calibrated_profile_goes_straight_to_predict(source_dir, tmp_path):
    files = [os.path.join(source_dir, f) for f in ("validation/results/2026-11-21-h200/gemm_h200.json",
                                                   "validation/results/2026-11-21-h200/bandwidth_h200.json")]
    profile = roofplan.calibrate(*files, device="h200")
    path = tmp_path / "profile.json"
    fitted = roofplan.predict("resnet50", device="h200", batch=64, profile=profile)
    path.write_text(profile.to_json())
    from_file = roofplan.predict("resnet50", device="h200", batch=64, profile=str(path))
    a, b = fitted.to_dict(), from_file.to_dict()
    assert a.pop("profile").endswith(".json") and b.pop("profile") == str(path)  # a profile's source is its file
    assert a == b
    assert a["step_time_s"] != roofplan.predict("resnet50", device="h200", batch=64).step_time_s
