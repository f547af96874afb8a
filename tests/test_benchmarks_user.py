"""Smoke tests of the benchmarks written as users write them (benchmarks/user.py) and of the
instruction counter (benchmarks/instructions.py). No timings are asserted."""

import subprocess

import numpy as np
import pytest

from benchmarks import instructions, user
from benchmarks.run import ALL_CASES, REPS, check_agreement


@pytest.mark.parametrize("name", sorted(user.CASES))
def test_user_cases_agree_and_are_registered(name):
    assert ALL_CASES[name] is user.CASES[name] and REPS[name] > 0
    case = user.CASES[name]("tiny")
    expected = {"eager", case.reference} | ({"torch"} if user.torch is not None else set())
    assert expected <= set(case.impls)
    results = check_agreement(case, rtol=1e-3 if name == "deep_f32" else 2e-4)
    for res in results.values():
        assert all(np.all(np.isfinite(r)) for r in res)


@pytest.mark.parametrize("name", ["chain_f64", "deep_f64", "mlp_labels_f64"])
def test_float64_cases_stay_float64(name):
    results = check_agreement(user.CASES[name]("tiny"), rtol=2e-4)
    assert all(np.asarray(r).dtype == np.float64 for r in results["eager"])


def test_mlp_labels_reference_matches_central_differences():
    """The hand-written step with class-index labels is itself right (float64)."""
    case = user.CASES["mlp_labels_f64"]("tiny")
    loss, dw1, dw2 = case.impls["numpy"]()
    x, labels, w1, w2 = user._mlp_data("tiny", np.float64)

    def f(w1_, w2_):
        z = np.maximum(x @ w1_, 0) @ w2_
        z = z - z.max(1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(1, keepdims=True))
        return -logp[np.arange(len(labels)), labels].mean()

    assert loss == pytest.approx(f(w1, w2), rel=1e-10)
    eps = 1e-6
    for i, j in [(0, 0), (3, 5), (7, 2)]:
        d = np.zeros_like(w1)
        d[i, j] = eps
        assert dw1[i, j] == pytest.approx((f(w1 + d, w2) - f(w1 - d, w2)) / (2 * eps), abs=1e-7)
        d = np.zeros_like(w2)
        d[j, i % w2.shape[1]] = eps
        num = (f(w1, w2 + d) - f(w1, w2 - d)) / (2 * eps)
        assert dw2[j, i % w2.shape[1]] == pytest.approx(num, abs=1e-7)


def test_instruction_count_is_the_difference_per_step(monkeypatch):
    """count() runs the case twice under valgrind (k steps and none) and divides."""
    calls = []

    def fake_run(cmd, **kwargs):
        calls.append(cmd)
        steps = int(cmd[-1])
        stderr = f"==1== Events    : Ir\n==1== Collected : {1_000_000 + 250 * steps}\n"
        return subprocess.CompletedProcess(cmd, 0, "", stderr)

    monkeypatch.setattr(instructions.shutil, "which", lambda name: "/usr/bin/valgrind")
    monkeypatch.setattr(instructions.subprocess, "run", fake_run)
    assert instructions.count("chain_f64", "eager", "tiny", reps=4) == 250
    assert [c[-4:] for c in calls] == [["chain_f64", "eager", "tiny", "4"],
                                       ["chain_f64", "eager", "tiny", "0"]]  # fmt: skip
    assert calls[0][:2] == ["valgrind", "--tool=callgrind"]


def test_instruction_count_reports_a_failed_child(monkeypatch):
    def failing(cmd, **kwargs):
        return subprocess.CompletedProcess(cmd, 1, "", "Traceback ...\nKeyError: 'nope'\n")

    monkeypatch.setattr(instructions.shutil, "which", lambda name: "/usr/bin/valgrind")
    monkeypatch.setattr(instructions.subprocess, "run", failing)
    with pytest.raises(RuntimeError, match="(?s)chain_f64/eager: valgrind failed.*KeyError"):
        instructions.count("chain_f64", "eager", "tiny")


def test_instruction_child_runs_the_step(capsys):
    """The child (what valgrind runs) sets up a case and runs the step, without PyTorch."""
    instructions.main(["--child", "chain_f32", "eager", "tiny", "1"])
    with pytest.raises(SystemExit, match="has no implementation 'nope'"):
        instructions.main(["--child", "chain_f32", "nope", "tiny", "1"])


def test_split_times_each_size_against_its_own_hand_written_step(tmp_path, monkeypatch):
    """benchmarks.split: one row per size, each implementation's gap to the hand-written
    step of that size, written between its markers in the given file."""
    from benchmarks import run, split

    dims = [(2, 3, 4, 5), (6, 3, 4, 5)]
    rows = split.measure(1, dims)
    assert [d for d, _ in rows] == dims
    for _, med in rows:
        assert {"numpy", "eager"} <= set(med) and all(t > 0 for t in med.values())
    text = split.markdown(rows, "header")
    for d, med in rows:
        first = f"| {'x'.join(map(str, d))} |"
        line = next(row for row in text.splitlines() if row.startswith(first))
        gap = (med["eager"] - med["numpy"]) * 1e3
        assert f"({gap:+.3f})" in line
    out = tmp_path / "perf.md"
    out.write_text("before\n")
    monkeypatch.setattr(run, "_THREADS_PINNED", True)
    monkeypatch.setattr(split, "DIMS", tuple(dims))
    assert split.main(["--quick", "--out", str(out)]) == 0
    doc = out.read_text()
    assert doc.startswith("before") and "<!-- bench:split:start -->" in doc and "| 6x3x4x5 |" in doc
