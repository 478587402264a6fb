"""Shared fixtures: the roofplan binary of the same build (ROOFPLAN_CLI, set by CTest) to compare against."""
import json
import os
import subprocess

import pytest


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("ROOFPLAN_CLI")
    if not path or not os.path.exists(path):
        pytest.skip("ROOFPLAN_CLI (the roofplan binary of this build) is not set; CTest sets it")

    def run(*args, expect=0):
        done = subprocess.run([path, *args], capture_output=True, text=True, timeout=300)
        assert done.returncode == expect, (args, done.returncode, done.stderr)
        return json.loads(done.stdout) if "--json" in args and done.stdout.strip() else done

    return run


@pytest.fixture(scope="session")
def source_dir():
    return os.environ.get("ROOFPLAN_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
