"""The fast paths (one-GPU predict in this process, sweep) apply the CLI's own checks of every option: the same
limits and the same messages as `roofplan predict`; Python values are taken as the command line takes them (numpy
scalars too, never a bool or text with a NUL)."""
import copy
import os
import pickle
import subprocess
import sys
import textwrap

import pytest

import roofplan
from roofplan import _model

MODEL = ["-m", "resnet50", "-d", "h100-sxm"]

# (predict's keyword arguments, the same command line): each out of the CLI's range.
OUT_OF_RANGE = [
    (dict(image_size=70_000), ["--image-size", "70000"]),
    (dict(image_size=2**31), ["--image-size", str(2**31)]),
    (dict(seq=2**24 + 1), ["--seq", str(2**24 + 1)]),
    (dict(seq=2**63), ["--seq", str(2**63)]),
    (dict(batch=2**31), ["-b", str(2**31)]),
    (dict(batch=2**70), ["-b", str(2**70)]),
    (dict(input_source="cpu-decode", loader_workers=10**6), ["--input-source", "cpu-decode", "--loader-workers",
                                                             "1000000"]),
    (dict(input_source="cpu-decode", loader_workers=8, decode_rate=float("nan")),
     ["--input-source", "cpu-decode", "--loader-workers", "8", "--decode-rate", "nan"]),
    (dict(input_source="cpu-decode", loader_workers=8, decode_rate=-5), ["--input-source", "cpu-decode",
                                                                          "--loader-workers", "8", "--decode-rate", "-5.0"]),
    (dict(input_source="cpu-decode", loader_workers=8, decode_rate=float("inf")),
     ["--input-source", "cpu-decode", "--loader-workers", "8", "--decode-rate", "inf"]),
]


def cli_message(cli, args):
    done = cli("predict", *MODEL, *args, expect=2)
    return done.stderr.strip().splitlines()[0].removeprefix("roofplan: error: ")


@pytest.mark.parametrize("kwargs, args", OUT_OF_RANGE, ids=[" ".join(a) for _, a in OUT_OF_RANGE])
def test_predict_refuses_what_the_cli_refuses_with_its_message(cli, kwargs, args):
    expected = cli_message(cli, args)
    assert "must be" in expected, expected
    with pytest.raises(roofplan.RoofplanError) as raised:
        roofplan.predict("resnet50", device="h100-sxm", **kwargs)
    assert str(raised.value) == expected


@pytest.mark.parametrize("kwargs, args", [c for c in OUT_OF_RANGE if "batch" not in c[0] and "seq" not in c[0]
                                          and "image_size" not in c[0]],
                         ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_sweep_refuses_what_the_cli_refuses(cli, kwargs, args):
    with pytest.raises(roofplan.RoofplanError) as raised:
        roofplan.sweep("resnet50", devices=["h100-sxm"], batches=[8], **kwargs)
    assert str(raised.value) == cli_message(cli, args)


def test_sweep_refuses_batches_out_of_range(cli):
    for batch in (0, 2**31, 2**70):
        with pytest.raises(roofplan.RoofplanError) as raised:
            roofplan.sweep("resnet50", devices=["h100-sxm"], batches=[8, batch])
        assert str(raised.value) == "batches: " + cli_message(cli, ["-b", str(batch)])


def test_models_refuse_sizes_out_of_range(cli):
    for kwargs, args in [(dict(seq=2**24 + 1), ["--seq", str(2**24 + 1)]), (dict(seq=-3), ["--seq", "-3"])]:
        with pytest.raises(roofplan.RoofplanError) as raised:
            roofplan.zoo("bert-base", **kwargs)
        assert str(raised.value) == cli("inspect", "-m", "bert-base", *args, expect=2).stderr.strip().splitlines()[
            0].removeprefix("roofplan: error: ")
    with pytest.raises(roofplan.RoofplanError, match=r"--image-size: must be an integer in \[1, 65536\], got '0'"):
        roofplan.zoo("resnet50", image_size=0)


def test_numpy_scalars_are_numbers_and_bools_are_not(cli):
    numpy = pytest.importorskip("numpy")
    plain = roofplan.predict("resnet50", device="h100-sxm", batch=64, context_gib=1.5)
    typed = roofplan.predict("resnet50", device="h100-sxm", batch=numpy.int64(64), context_gib=numpy.float32(1.5))
    assert typed.to_dict() == plain.to_dict()
    records = roofplan.sweep("resnet50", devices=["h100-sxm"], batches=numpy.array([8, 64]), precisions=["fp32"])
    assert [r["batch"] for r in records] == [8, 64]
    system = roofplan.predict("resnet50", system="dgx-h100", gpus=numpy.int32(8), batch=numpy.int16(32))
    assert system.to_dict() == cli("predict", "-m", "resnet50", "--system", "dgx-h100", "--gpus", "8", "-b", "32",
                                   "--json")
    for call in (lambda: roofplan.predict("resnet50", device="h100-sxm", batch=True),
                 lambda: roofplan.sweep("resnet50", devices=["h100-sxm"], batches=[True]),
                 lambda: roofplan.predict("resnet50", device="h100-sxm", context_gib=False or True)):
        with pytest.raises(TypeError, match="got bool"):
            call()


def test_python_types_name_the_option():
    with pytest.raises(TypeError, match="^loader_workers must be an int, got float$"):
        roofplan.predict("resnet50", device="h100-sxm", input_source="cpu-decode", loader_workers=1.5)
    with pytest.raises(TypeError, match="^decode_rate must be a number, got str$"):
        roofplan.sweep("resnet50", devices=["h100-sxm"], batches=[8], decode_rate="fast")


def test_text_with_a_nul_is_refused():
    for call, name in [(lambda: roofplan.predict("resnet50", device="h100-sxm\0junk"), "device"),
                       (lambda: roofplan.predict("resnet50", system="dgx-h100\0x", gpus=8), "system"),
                       (lambda: roofplan.inspect("resnet50\0x"), "model"),
                       (lambda: roofplan.sweep("resnet50", devices=["h100\0"], batches=[1]), "devices"),
                       (lambda: roofplan.load("net\0.json"), "path")]:
        with pytest.raises(roofplan.RoofplanError, match=f"^{name}: .* contains a NUL character"):
            call()


def test_help_gives_the_commands_help_text(cli):
    text = roofplan.predict(help=True)
    assert isinstance(text, str) and "--batch" in text
    program = os.environ["ROOFPLAN_CLI"]  # the binary's usage line names it as it was called
    expected = cli("predict", "--help").stdout.replace(f"Usage: {program} ", "Usage: roofplan ")
    # CLI11 lists an option's "Needs:" in the order of the options' addresses: compare those lines as sets.
    assert [sorted(line.split()) if "Needs:" in line else line for line in text.splitlines()] == [
        sorted(line.split()) if "Needs:" in line else line for line in expected.splitlines()]
    assert roofplan.collective(help=True) == cli("collective", "--help").stdout.replace(f"Usage: {program} ",
                                                                                          "Usage: roofplan ")


def test_a_loaded_model_takes_no_load_options():
    model = roofplan.zoo("bert-base")
    for call in (lambda: roofplan.inspect(model, seq=128), lambda: roofplan.roofline(model, device="h100-sxm", seq=128),
                 lambda: roofplan.predict(model, device="h100-sxm", seq=128)):
        with pytest.raises(TypeError, match=r"^seq: the model is already loaded; give them to roofplan\.zoo\(\)"):
            call()


def test_svg_true_with_csv_keeps_the_chart_and_leaves_no_file():
    result = roofplan.roofline("resnet18", device="h100-sxm", batch=8, svg=True, csv=True)
    assert result.output.startswith("name,") or "," in result.output.splitlines()[0]
    assert "<svg" in result.chart
    assert not [f for f in os.listdir(_model._temp_dir) if f.endswith(".svg")]


def test_cpp_timing_refuses_zero_rounds():
    model = roofplan.zoo("resnet18")._core
    request = roofplan._commands._request({"device": "h100-sxm", "batch": 8})
    for calls, rounds in ((0, 1), (1, 0), (-1, 3)):
        with pytest.raises(ValueError, match=f"calls and rounds must be at least 1, got calls={calls}, "
                                             f"rounds={rounds}"):
            roofplan._core.cpp_predict_seconds(model, request, calls, rounds)
    assert roofplan._core.cpp_predict_seconds(model, request, 1, 1) > 0


def test_results_and_models_copy_and_pickle():
    p = roofplan.predict("resnet50", device="h100-sxm", batch=16)
    fields = p.to_dict()
    for copied in (copy.copy(p), copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert type(copied) is roofplan.Result and copied.to_dict() == fields and copied.command == "predict"
    chart = roofplan.roofline("resnet18", device="h100-sxm", batch=8, svg=True)
    again = pickle.loads(pickle.dumps(chart))
    assert again.to_dict() == chart.to_dict() and again.chart == chart.chart and again.exit_code == chart.exit_code
    table = roofplan.devices()
    assert pickle.loads(pickle.dumps(table)) == table and copy.copy(table).command == "devices"
    with pytest.raises(AttributeError, match="has no attribute '_secret'"):
        p._secret
    zoo = roofplan.zoo("bert-base", seq=384)
    back = pickle.loads(pickle.dumps(zoo))
    assert (back.id, back.size, back.parameters) == ("bert-base", 384, zoo.parameters)
    built = roofplan.from_layers([roofplan.layer("linear", "fc", out_features=7)], input=[3], id="lin")
    built.unsupported = [{"type": "x", "count": 1, "first": "n", "reason": "r"}]
    back = pickle.loads(pickle.dumps(built))
    assert back.to_json() == built.to_json() and back.unsupported == built.unsupported
    assert copy.copy(built)._core is built._core and copy.deepcopy(built).unsupported == built.unsupported


def test_sweep_records_are_the_commands_figures(cli):
    records = roofplan.sweep("resnet50", devices=["h100-sxm", "a100-sxm4-80gb"], batches=[16, 128],
                             precisions=["amp-bf16"], modes=["train", "infer"])
    assert len(records) == 8
    for r in records[::3]:
        expected = cli("predict", "-m", "resnet50", "-d", r["device"], "-b", str(r["batch"]), "-p", r["precision"],
                       "--mode", r["mode"], "--json")
        for field in ("step_time_s", "throughput_samples_per_s", "fits", "max_batch", "bound", "gpu_idle_s",
                      "host_s", "power_w", "samples_per_joule"):
            assert r[field] == expected[field], (r, field)
        assert r["memory_bytes"] == expected["memory_bytes"]


def test_ctrl_c_stops_a_long_sweep():
    """A signal's handler runs between configurations (the C++ loop checks for it), not after the whole sweep."""
    script = textwrap.dedent("""
        import signal, sys, time
        import roofplan
        def interrupt(*_):
            raise KeyboardInterrupt
        model = roofplan.zoo("resnet50")
        roofplan.sweep(model, devices=["h100-sxm"], batches=[1], memory=False)  # the predictor is made once
        start = time.perf_counter()
        roofplan.sweep(model, devices=["h100-sxm"], batches=range(1, 2001), memory=False)
        per_sweep = time.perf_counter() - start
        signal.signal(signal.SIGALRM, interrupt)
        signal.setitimer(signal.ITIMER_REAL, per_sweep / 2)
        start = time.perf_counter()
        try:
            roofplan.sweep(model, devices=["h100-sxm"], batches=range(1, 40001), memory=False)  # 20 sweeps' work
        except KeyboardInterrupt:
            print(f"interrupted after {(time.perf_counter() - start) / per_sweep:.1f} sweeps")
            sys.exit(0)
        sys.exit(1)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert float(done.stdout.split()[2]) < 10, done.stdout  # long before the 20 sweeps' work was done
