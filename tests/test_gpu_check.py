"""``make gpu-check`` (``benchmarks/gpu_check.py``) without a GPU: the dry run gets as far as
it can, says "no GPU found" for what needs one, writes its summary and exits 0. The run is
made in an environment like a GPU machine's image: the packages it lacks (Hypothesis,
graphviz, array_api_strict, Jupyter's) cannot be imported there.

Also here: the pieces the GPU run relies on, checked on the CPU (a lesson executed cell by
cell, the pytest summary parser, the out-of-memory error CuPy's allocator is wrapped with).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

from benchmarks import gpu_check
from tinygrad_edu import backend

ROOT = Path(__file__).resolve().parents[1]
# what a GPU machine's image lacks (docs/gpu.md): imports of them fail there
ABSENT = ("hypothesis", "graphviz", "array_api_strict", "onnxruntime", "nbclient", "jupytext",
          "nbformat")  # fmt: skip
SITE = f"""import sys
class _Absent:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.split(".")[0] in {ABSENT!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, _Absent)
"""


def _image_env(tmp_path) -> dict:
    """The environment of a process that sees only what the GPU image has (see ABSENT)."""
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(SITE)
    env = dict(os.environ, PYTHONPATH=f"{site}{os.pathsep}{ROOT}")
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # no installed package's plugins: as there
    for var in ("OUT", "TG_GPU_TEST_DEVICE", "PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER"):
        env.pop(var, None)
    return env


@pytest.mark.skipif(backend.cuda_available(), reason="a GPU is here: the run is the real one")
def test_the_dry_run_says_no_gpu_and_writes_its_summary(tmp_path):
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "benchmarks.gpu_check", "--dry-run", "--out",
                           str(out)], cwd=ROOT, env=_image_env(tmp_path), capture_output=True,
                          text=True, timeout=400)  # fmt: skip
    text = done.stdout + done.stderr
    assert done.returncode == 0, text
    assert "Traceback" not in text, text
    assert "no GPU found: " in done.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert tuple(summary) == gpu_check.SUMMARY_KEYS
    assert summary["dry_run"] is True and summary["exit_code"] == 0
    assert summary["gpu"]["found"] is False and summary["gpu"]["reason"]
    assert list(summary["parts"]) == list(gpu_check.PARTS)
    for name, part in summary["parts"].items():
        assert tuple(part) == gpu_check.PART_KEYS, name
        assert part["status"] == "no-gpu", (name, part)
        assert part["line"].startswith("no GPU found: "), (name, part)
        assert f"[{name}] no-gpu: no GPU found: " in done.stdout
    # the gpu tests were collected and every one skipped, with the reason
    tests = summary["parts"]["pytest"]["details"]
    assert tests["tests"] >= 1000 and tests["skipped"] == tests["tests"], tests
    assert tests["files"] >= 5 and any("CuPy" in why for why in tests["skip_reasons"])
    assert (out / "junit-gpu.xml").exists()
    # what ran on the CPU instead
    assert "the loss fell" in summary["parts"]["memory"]["line"]
    assert "gradient across" in summary["parts"]["dlpack"]["line"]
    # the rows for docs/gpu.md, and the log with every part's header
    rows = (out / "summary.md").read_text()
    assert "| part | result | seconds | what it found |" in rows
    assert all(f"| {name} | no-gpu |" in rows for name in gpu_check.PARTS)
    log = (out / "gpu-check.log").read_text()
    assert all(f"===== {name} (limit" in log for name in gpu_check.PARTS)


def test_a_part_that_hangs_is_stopped_and_named(tmp_path):
    with open(tmp_path / "log", "w") as log:
        code, output, seconds = gpu_check.run_child(
            [sys.executable, "-c", "import time; print('started', flush=True); time.sleep(60)"],
            timeout=2, log=log)  # fmt: skip
    assert code is None and "started" in output and seconds < 30


def test_a_lesson_runs_cell_by_cell_and_skips_what_needs_a_missing_package(tmp_path):
    lesson = tmp_path / "99_x.py"
    lesson.write_text(
        "# %% [markdown]\n# # A lesson\n\n"
        "# %%\nimport numpy as np\nx = np.arange(3)\n\n"
        "# %%\nimport array_api_strict as xps\n\n"
        "# %%\nprint(xps.asarray([1]))\n\n"
        "# %%\nfrom tinygrad_edu.viz.style import graphviz_module\ngraphviz_module()\n\n"
        "# %%\ny = x * 2\n"
    )  # fmt: skip
    code = (
        "import json, sys; from pathlib import Path; from benchmarks.gpu_check import "
        f"run_lesson; print(json.dumps(run_lesson(Path({str(lesson)!r}), need_gpu=False)))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_image_env(tmp_path),
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["status"] == "pass", result
    assert result["details"]["ran"] == 2 and len(result["details"]["skipped"]) == 3
    assert result["details"]["missing_packages"] == ["array_api_strict", "graphviz"]
    # anything else stops the lesson, naming the cell
    lesson.write_text("# %%\nx = 1\n\n# %%\nraise ValueError('broken')\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_image_env(tmp_path),
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert (
        result["status"] == "fail"
        and "cell 2 (line 5) raised ValueError: broken" in (result["line"])
    )


def test_the_gpu_lessons_parse_into_cells():
    for path in gpu_check.LESSONS.values():
        cells = gpu_check.lesson_cells(ROOT / path)
        assert len(cells) > 10
        assert not any("[markdown]" in source for _, source in cells)
        for i, (_line, source) in enumerate(cells):
            compile(source, f"{path} cell {i}", "exec")
        # imports a GPU image may lack are guarded or optional
        assert set(gpu_check.missing_imports(ROOT / path)) <= {"cupy", *gpu_check.OPTIONAL}


def test_the_pytest_summary_is_read_from_its_junit_file_and_output(tmp_path):
    junit = tmp_path / "j.xml"
    junit.write_text('<testsuites><testsuite name="pytest" errors="1" failures="2" skipped="3" '
                     'tests="10" time="1.0"></testsuite></testsuites>')  # fmt: skip
    output = ("SKIPPED [2] tests/gpu/a.py:3: needs a GPU\nSKIPPED [1] tests/b.py:9: needs a GPU\n"
              "==== 2 failed, 4 passed, 3 skipped, 1 error in 1.00s ====\n")  # fmt: skip
    counts = gpu_check._pytest_counts(output, junit)
    assert counts["tests"] == 10 and counts["passed"] == 4 and counts["failures"] == 2
    assert counts["line"] == "2 failed, 4 passed, 3 skipped, 1 error in 1.00s"
    assert counts["skip_reasons"] == {"needs a GPU": 3}


def test_the_gpu_test_files_start_with_the_device_tests():
    files = gpu_check.gpu_test_files()
    assert files[0] == os.path.join("tests", "gpu", "test_devices.py")
    assert os.path.join("tests", "gpu", "test_ops_table.py") in files
    assert os.path.join("tests", "assignments", "test_a4_gpu.py") in files


# -- the out-of-memory error, with CuPy's allocator stood in for ------------------------------
class _OutOfMemory(MemoryError):
    pass


class _Pool:
    def __init__(self):
        self.asked = []

    def malloc(self, nbytes):
        self.asked.append(nbytes)
        if nbytes > 2**30:
            raise _OutOfMemory(f"Out of memory allocating {nbytes:,} bytes")
        return ("block", nbytes)

    def used_bytes(self):
        return 3 * 2**20

    def total_bytes(self):
        return 5 * 2**20


def _fake_cupy(pool):
    state = {"allocator": pool.malloc}
    cuda = types.SimpleNamespace(
        memory=types.SimpleNamespace(OutOfMemoryError=_OutOfMemory),
        runtime=types.SimpleNamespace(CUDARuntimeError=type("CUDARuntimeError", (RuntimeError,),
                                                            {}), getDevice=lambda: 1),
        get_allocator=lambda: state["allocator"],
        set_allocator=lambda fn: state.update(allocator=fn),
    )  # fmt: skip
    return types.SimpleNamespace(cuda=cuda, get_default_memory_pool=lambda: pool), state


def test_a_failed_gpu_allocation_names_the_device_and_the_size(monkeypatch):
    monkeypatch.setattr(backend, "_oom_hook", [])
    pool = _Pool()
    cupy, state = _fake_cupy(pool)
    backend._install_oom_hook(cupy)
    allocate = state["allocator"]
    assert allocate is not pool.malloc and allocate(1024) == ("block", 1024)
    with pytest.raises(backend.OutOfMemoryError) as info:
        allocate(4 * 2**40)
    message = str(info.value)
    assert "cuda:1" in message and "4.00 TiB" in message and str(4 * 2**40) in message
    assert "3.00 MiB" in message and "5.00 MiB" in message and "empty_cache" in message
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, MemoryError)
    assert isinstance(info.value.__cause__, _OutOfMemory)
    import tinygrad_edu as tg

    assert tg.cuda.OutOfMemoryError is backend.OutOfMemoryError


def test_an_allocator_of_the_programs_own_is_kept(monkeypatch):
    monkeypatch.setattr(backend, "_oom_hook", [])
    pool = _Pool()
    cupy, state = _fake_cupy(pool)

    def mine(nbytes):
        return "mine"

    state["allocator"] = mine
    backend._install_oom_hook(cupy)
    assert state["allocator"] is mine


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_gpu_check_runs_the_script_from_the_checkout_with_out():
    env = {k: v for k, v in os.environ.items() if k not in ("OUT", "PYTHONPATH")}
    shown = subprocess.run(["make", "--no-print-directory", "-n", "-C", str(ROOT), "gpu-check"],
                           env=dict(env, OUT="/results"), capture_output=True, text=True,
                           timeout=60)  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    command = shown.stdout.replace("\\\n", " ")
    assert "PYTHONPATH=." in command and "python3 -m benchmarks.gpu_check" in command
    assert '--out "/results"' in command and "pip" not in command
    default = subprocess.run(["make", "--no-print-directory", "-n", "-C", str(ROOT), "gpu-check"],
                             env=env, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert '--out "build/gpu-check"' in default.stdout
