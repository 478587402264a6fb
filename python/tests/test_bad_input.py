"""Bad input from Python raises an exception with a clear message; the interpreter never aborts.  Each case runs
in its own interpreter, so a crash would show as a signal, not take the test run down with it."""
import subprocess
import sys
import textwrap

import pytest

CASES = {
    "negative batch": ("roofplan.predict('resnet50', device='h100-sxm', batch=-5)", "RoofplanError",
                       "--batch: must be an integer >= 1, got '-5'"),
    "huge batch": ("roofplan.predict('resnet50', device='h100-sxm', batch=2**62)", "RoofplanError",
                   f"--batch: must be an integer <= 2147483647, got '{2**62}'"),
    # The CLI's message for a number past 64 bits (its parser's overflow), word for word.
    "batch too big for C++": ("roofplan.predict('resnet50', device='h100-sxm', batch=2**70)", "RoofplanError",
                              f"--batch: must be an integer >= 1, got '{2**70}'"),
    "batch too big for C++ in a sweep": ("roofplan.sweep('resnet50', devices=['h100-sxm'], batches=[2**70])",
                                         "RoofplanError", f"batches: --batch: must be an integer >= 1, got '{2**70}'"),
    "float batch": ("roofplan.predict('resnet50', device='h100-sxm', batch=1.5)", "TypeError",
                    "batch must be an int, got float"),
    "float loader workers": ("roofplan.predict('resnet50', device='h100-sxm', input_source='cpu-decode', "
                             "loader_workers=1.5)", "TypeError", "loader_workers must be an int, got float"),
    "seq too big for C++": ("roofplan.predict('bert-base', device='h100-sxm', seq=2**63)", "RoofplanError",
                            f"--seq: must be an integer in [1, 16777216], got '{2**63}'"),
    "seq too big for C++ in load": ("roofplan.zoo('bert-base', seq=2**63)", "RoofplanError",
                                    "--seq: must be an integer in [1, 16777216]"),
    "unknown model": ("roofplan.predict('resnet', device='h100-sxm')", "RoofplanError", "unknown model 'resnet'"),
    "unknown device": ("roofplan.predict('resnet50', device='h9000')", "RoofplanError", "h9000"),
    "device is not a str": ("roofplan.predict('resnet50', device=3)", "TypeError", "device must be a str, got int"),
    "NUL in a device": ("roofplan.predict('resnet50', device='h100\\0')", "RoofplanError",
                        "device: 'h100\\x00' contains a NUL character"),
    "nan context": ("roofplan.predict('resnet50', device='h100-sxm', context_gib=float('nan'))", "RoofplanError",
                    "--context-gib must be a number of GiB >= 0 and < 1e6"),
    "zero timing rounds": ("m = roofplan.zoo('resnet18')._core; q = roofplan._core.Request(); q.device = 'h100-sxm'; "
                           "roofplan._core.cpp_predict_seconds(m, q, 10, 0)", "ValueError",
                           "calls and rounds must be at least 1, got calls=10, rounds=0"),
    "missing model file": ("roofplan.load('/nonexistent/net.json')", "RoofplanError", "/nonexistent/net.json"),
    "model file of garbage": ("open('/tmp/rp-garbage.json','w').write('{' * 100000); roofplan.load('/tmp/rp-garbage.json')",
                              "RoofplanError", "rp-garbage.json"),
    "unknown layer type": ("roofplan.from_layers([roofplan.layer('conv3d', 'c')], input=[3, 8, 8])", "RoofplanError",
                           "roofplan-model/1 document: layers[0]"),
    "zero-size input": ("roofplan.from_layers([roofplan.layer('relu', 'r')], input=[0])", "RoofplanError",
                        "roofplan-model/1 document: input"),
    "unknown option": ("roofplan.collective(op='all-reduce', system='dgx-h100', byts='1MB')", "TypeError",
                       "collective() got an unexpected keyword argument 'byts'"),
    "sweep of nothing": ("roofplan.sweep('resnet50', devices=[], batches=[1])", "ValueError",
                         "devices: give at least one"),
    "sweep with a bad batch": ("roofplan.sweep('resnet50', devices=['h100-sxm'], batches=[0])", "RoofplanError",
                               "batches: --batch: must be an integer >= 1, got '0'"),
    "sweep with a nan decode rate": ("roofplan.sweep('resnet50', devices=['h100-sxm'], batches=[8], "
                                     "input_source='cpu-decode', loader_workers=4, decode_rate=float('nan'))",
                                     "RoofplanError", "--decode-rate: must be a number in [0, 1e+07], got 'nan'"),
    "data-dependent control flow": (textwrap.dedent("""
        import torch
        class M(torch.nn.Module):
            def forward(self, x):
                return x if x.max() > 0 else -x
        roofplan.from_torch(M(), torch.randn(2, 3))"""), "ValueError", "control flow"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_raises_never_aborts(name):
    code, exception, text = CASES[name]
    script = "import roofplan, sys\ntry:\n" + textwrap.indent(code.strip(), "    ") + (
        "\nexcept Exception as e:\n    print(type(e).__name__ + ': ' + str(e))\n    sys.exit(7)\n")
    if "torch" in code:
        pytest.importorskip("torch")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 7), f"{name}: the interpreter ended with {done.returncode}: {done.stderr[-2000:]}"
    if exception:
        assert done.returncode == 7, f"{name}: no exception: {done.stdout}"
        assert done.stdout.split(":")[0] == exception, done.stdout
    assert text in done.stdout, done.stdout
