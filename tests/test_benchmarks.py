"""Smoke test of the benchmarks: every case runs at a tiny size and all implementations agree
(no timing assertions: timings belong in docs/performance.md, not in tests)."""

import numpy as np
import pytest

from benchmarks import cases
from benchmarks.run import check_agreement, markdown, time_case, write_doc


@pytest.mark.parametrize("name", sorted(cases.CASES))
def test_case_implementations_agree(name):
    case = cases.CASES[name]("tiny")
    assert case.reference in case.impls
    expected = {"eager"} | ({"torch"} if cases.torch is not None else set())
    assert expected <= set(case.impls)
    results = check_agreement(case, rtol=1e-3 if name in ("deep_chain", "digits") else 2e-4)
    for res in results.values():
        assert all(np.all(np.isfinite(r)) for r in res)


def test_mlp_step_gradients_match_a_float64_reference():
    """The hand-written numpy reference is itself right: compare with float64 numerics."""
    x, labels, onehot, w1, w2 = (a.astype(np.float64) if a.dtype == np.float32 else a
                                 for a in cases._mlp_data("tiny"))  # fmt: skip
    loss, dw1, dw2 = (cases.to_numpy(r) for r in cases.mlp_step("tiny").impls["eager"]())

    def f(w1_, w2_):
        z = np.maximum(x @ w1_, 0) @ w2_
        z = z - z.max(1, keepdims=True)
        return -np.mean(np.sum(onehot * (z - np.log(np.exp(z).sum(1, keepdims=True))), 1))

    assert loss == pytest.approx(f(w1, w2), rel=1e-5)
    eps = 1e-6
    for (i, j) in [(0, 0), (3, 5), (7, 2)]:
        d = np.zeros_like(w1)
        d[i, j] = eps
        num = (f(w1 + d, w2) - f(w1 - d, w2)) / (2 * eps)
        assert dw1[i, j] == pytest.approx(num, rel=1e-3, abs=1e-6)
        d = np.zeros_like(w2)
        d[j, i % w2.shape[1]] = eps
        num = (f(w1, w2 + d) - f(w1, w2 - d)) / (2 * eps)
        assert dw2[j, i % w2.shape[1]] == pytest.approx(num, rel=1e-3, abs=1e-6)


def test_harness_times_and_writes_markdown(tmp_path):
    case = cases.small_ops("tiny")
    med = time_case(case, reps=2)
    assert set(med) == set(case.impls) and all(t > 0 for t in med.values())
    text = markdown([(case, med, {})], "cpu", "header line")
    assert "| benchmark | implementation |" in text and "reference" in text
    doc = tmp_path / "perf.md"
    doc.write_text("# Performance\n\nintro\n")
    write_doc(str(doc), "cpu", text)
    write_doc(str(doc), "cpu", "second\n")  # replaces the block between the markers
    body = doc.read_text()
    assert body.startswith("# Performance\n\nintro") and body.count("bench:cpu:start") == 1
    assert "second" in body and "header line" not in body
