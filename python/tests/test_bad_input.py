"""Bad input from Python raises an exception with a clear message; the interpreter never aborts.  Each case runs
in its own interpreter, so a crash would show as a signal, not take the test run down with it."""
import subprocess
import sys
import textwrap

import pytest

CASES = {
    "negative batch": ("roofplan.predict('resnet50', device='h100-sxm', batch=-5)", "RoofplanError", "--batch"),
    "huge batch": ("roofplan.predict('resnet50', device='h100-sxm', batch=2**62)", "RoofplanError", ""),
    "batch too big for C++": ("roofplan.predict('resnet50', device='h100-sxm', batch=2**70)", "Error", ""),
    "float batch": ("roofplan.predict('resnet50', device='h100-sxm', batch=1.5)", "TypeError", "batch"),
    "unknown model": ("roofplan.predict('resnet', device='h100-sxm')", "RoofplanError", "resnet"),
    "unknown device": ("roofplan.predict('resnet50', device='h9000')", "RoofplanError", "h9000"),
    "device is not a str": ("roofplan.predict('resnet50', device=3)", "TypeError", "device"),
    "nan context": ("roofplan.predict('resnet50', device='h100-sxm', context_gib=float('nan'))", "RoofplanError",
                    "context"),
    "missing model file": ("roofplan.load('/nonexistent/net.json')", "ValueError", "nonexistent"),
    "model file of garbage": ("open('/tmp/rp-garbage.json','w').write('{' * 100000); roofplan.load('/tmp/rp-garbage.json')",
                              "ValueError", "rp-garbage.json"),
    "unknown layer type": ("roofplan.from_layers([roofplan.layer('conv3d', 'c')], input=[3, 8, 8])", "ValueError",
                           "conv3d"),
    "zero-size input": ("roofplan.from_layers([roofplan.layer('relu', 'r')], input=[0])", "ValueError", "input"),
    "unknown option": ("roofplan.collective(op='all-reduce', system='dgx-h100', byts='1MB')", "TypeError", "byts"),
    "sweep of nothing": ("roofplan.sweep('resnet50', devices=[], batches=[1])", "ValueError", "devices"),
    "sweep with a bad batch": ("print(roofplan.sweep('resnet50', devices=['h100-sxm'], batches=[0])[0]['error'])",
                               "", "batch"),
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
        assert done.stdout.split(":")[0].endswith(exception), done.stdout
    assert text in done.stdout, done.stdout
