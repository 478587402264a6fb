"""Model files from Python: a file edited after it was loaded is read again (by the package and by the commands it
runs in this process), a file model names its file by absolute path with every load option, the caches are
bounded, and an ONNX import's left-out operators are one list of records and Python warnings with the CLI's text."""
import json
import os
import shutil
import warnings

import pytest

import roofplan
from roofplan import _model


def tiny(source_dir, tmp_path, out_features=10, name="tiny.json"):
    """examples/models/tiny_cnn.json with its last layer's width changed (another file, the same schema)."""
    with open(os.path.join(source_dir, "examples/models/tiny_cnn.json")) as f:
        document = json.load(f)
    document["layers"][-1]["out_features"] = out_features
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


def rewrite(path, text):
    """Replaces a file's content and moves its modification time on (filesystems with coarse clocks too)."""
    before = os.stat(path).st_mtime_ns
    path.write_text(text)
    os.utime(path, ns=(before + 2_000_000_000, before + 2_000_000_000))


def dynamic_onnx(path):
    """An ONNX graph with a dynamic sequence axis: [batch, seq, 64] @ [64, 32], then a Relu."""
    onnx = pytest.importorskip("onnx")
    import numpy
    from onnx import TensorProto, helper, numpy_helper
    weight = numpy_helper.from_array(numpy.ones((64, 32), dtype=numpy.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="proj"), helper.make_node("Relu", ["y"], ["z"], name="act")],
        "dynamic", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 64])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["batch", "seq", 32])], initializer=[weight])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def test_an_edited_model_file_gives_its_new_figures(source_dir, tmp_path):
    path = tiny(source_dir, tmp_path, out_features=10)
    first = roofplan.load(path).parameters
    assert roofplan.inspect(model_file=str(path)).params == first  # the command's own cache (C++) sees it too
    flops = roofplan.predict(model_file=str(path), device="h100-sxm", batch=8).flops_per_step
    with open(tiny(source_dir, tmp_path, out_features=1000, name="other.json")) as f:
        rewrite(path, f.read())
    again = roofplan.load(path).parameters
    assert again != first
    assert roofplan.inspect(model_file=str(path)).params == again
    assert roofplan.predict(model_file=str(path), device="h100-sxm", batch=8).flops_per_step > flops


def test_a_file_model_survives_a_change_of_directory(source_dir, tmp_path, monkeypatch, cli):
    tiny(source_dir, tmp_path)
    monkeypatch.chdir(tmp_path)
    model = roofplan.load("tiny.json")
    absolute = str(tmp_path / "tiny.json")
    assert model.cli_args() == ["--model-file", absolute]
    monkeypatch.chdir(source_dir)
    assert roofplan.inspect(model).to_dict() == cli("inspect", "--model-file", absolute, "--json")


def test_a_model_whose_file_changed_is_not_silently_reread(source_dir, tmp_path):
    path = tiny(source_dir, tmp_path)
    model = roofplan.load(path)
    rewrite(path, path.read_text().replace('"out_features": 10', '"out_features": 20'))
    with pytest.raises(roofplan.RoofplanError, match=r"tiny\.json: changed on disk since it was loaded; "
                                                     r"roofplan\.load\(\) it again"):
        roofplan.inspect(model)
    # The loaded model keeps its figures where the library holds it (one GPU, in this process).
    assert roofplan.predict(model, device="h100-sxm", batch=8).flops_per_step > 0


def test_load_options_reach_every_command(tmp_path, cli):
    path = str(dynamic_onnx(tmp_path / "dynamic.onnx"))
    model = roofplan.load(path, seq=200)
    assert model.size == 200
    assert model.cli_args() == ["--model-file", path, "--seq", "200"]
    assert roofplan.inspect(model).to_dict() == cli("inspect", "--model-file", path, "--seq", "200", "--json")
    assert roofplan.roofline(model, device="h100-sxm", batch=4).to_dict() == cli(
        "roofline", "--model-file", path, "--seq", "200", "-d", "h100-sxm", "-b", "4", "--json")
    system = roofplan.predict(model, system="dgx-h100", gpus=8, batch=4)
    assert system.to_dict() == cli("predict", "--model-file", path, "--seq", "200", "--system", "dgx-h100", "--gpus",
                                   "8", "-b", "4", "--json")
    strict = roofplan.load(path, seq=64, strict=True, inputs=["x"])
    assert strict.cli_args() == ["--model-file", path, "--seq", "64", "--strict", "--input", "x"]
    assert roofplan.inspect(strict, batch=2).to_dict() == cli("inspect", "--model-file", path, "--seq", "64",
                                                               "--strict", "--input", "x", "-b", "2", "--json")


def test_the_model_caches_are_bounded():
    for width in range(_model._CACHE_SIZE + 6):
        roofplan.from_layers([roofplan.layer("linear", "fc", out_features=width + 1)], input=[8], id=f"m{width}")
    assert len(_model._cache) == _model._CACHE_SIZE


def test_onnx_operators_left_out_are_records_and_warnings(source_dir, cli):
    path = os.path.join(source_dir, "tests/fuzz/corpus/onnx/unsupported.onnx")
    printed = [line.removeprefix("roofplan: warning: ")
               for line in cli("inspect", "--model-file", path).stderr.splitlines() if "not counted" in line]
    assert printed, "the corpus file has operators roofplan does not count"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = roofplan.load(path)
    assert [str(w.message) for w in caught] == printed
    assert model.unsupported and all(set(u) == {"type", "count", "first", "reason"} for u in model.unsupported)
    assert [f"{path}: {u['count']}x {u['type']} not counted ({u['reason']}; first: '{u['first']}'); --strict makes "
            "this an error" for u in model.unsupported] == printed
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        roofplan.predict(model, device="h100-sxm", batch=1, mode="infer")  # the fast path warns as the command does
    assert [str(w.message) for w in caught] == printed


def test_errors_of_a_model_made_in_python_do_not_name_the_scratch_file():
    with pytest.raises(roofplan.RoofplanError) as raised:
        roofplan.from_layers([roofplan.layer("conv2d", "c", out_channels=8, kernel=3, stirde=1)], input=[3, 32, 32])
    message = str(raised.value)
    assert message.startswith("roofplan-model/1 document: layers[0].stirde: unknown field"), message
    assert _model._temp_dir is None or _model._temp_dir not in message


def test_load_model_without_a_source_says_what_is_missing():
    with pytest.raises(ValueError, match=r"^no model given: give a zoo id \(model, see roofplan\.models\(\)\) or a "
                                         r"file \(model_file\)$"):
        roofplan._core.load_model()
    with pytest.raises(ValueError, match="not both"):
        roofplan._core.load_model(model="resnet50", model_file="x.json")


def lab_system(gb_s):
    """A two-GPU PCIe box (docs/extending.md's example, with a built-in device) whose host links run at gb_s."""
    return json.dumps({"schema": "roofplan-systems/1", "systems": [{
        "id": "lab-2gpu", "name": "Lab box: 2x H100 on PCIe, one socket", "device": "h100-pcie",
        "gpus_per_node": 2, "max_nodes": 1, "sockets": [0, 0], "nvlinks": [[0, 0], [0, 0]],
        "nvlink_gb_s_per_link": 0, "direct_kind": "nvlink", "switch_gb_s": 0,
        "host": [{"kind": "pcie", "gb_s": gb_s}, {"kind": "pcie", "gb_s": gb_s}], "socket_bus_gb_s": 0,
        "network": {"name": "", "gb_s_multi_flow": 0, "gb_s_single_flow": 0, "latency_s": 1e-5},
        "source": "a test"}]})


def test_an_edited_system_file_gives_its_new_figures(tmp_path, cli):
    path = tmp_path / "systems.json"
    path.write_text(lab_system(63))
    args = dict(op="allreduce", system="lab-2gpu", system_file=str(path), bytes="100MB")
    fast = roofplan.collective(**args).to_dict()
    assert fast == cli("collective", "--op", "allreduce", "--system", "lab-2gpu", "--system-file", str(path),
                       "--bytes", "100MB", "--json")
    rewrite(path, lab_system(16))
    slow = roofplan.collective(**args).to_dict()
    assert slow == cli("collective", "--op", "allreduce", "--system", "lab-2gpu", "--system-file", str(path),
                       "--bytes", "100MB", "--json")
    assert slow != fast
