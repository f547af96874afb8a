"""The per-op table (``tests/opinfo``) itself: every derivative case, row against PyTorch and
kernel example belongs to exactly one entry, so a consumer that iterates ``OPS`` sees all of
them; and a row's declared errors are exception classes."""

from tests.opinfo import GRADIENT_CASES, KERNEL_EXAMPLES, OPS, ROWS, SECOND_ORDER
from tinygrad_edu.ops import REGISTRY


def test_every_case_and_row_is_in_one_entry():
    cases = [id(c) for info in OPS.values() for c in info.gradients]
    rows = [id(r) for info in OPS.values() for r in info.rows]
    assert sorted(cases) == sorted(id(c) for c in GRADIENT_CASES)
    assert sorted(rows) == sorted(id(r) for r in ROWS)


def test_entries_are_keyed_by_op():
    for name, info in OPS.items():
        assert info.name == name
        for case in info.gradients:
            assert case.ops[0] == name, f"{case.name} filed under {name}"
        for row in info.rows:
            assert row.op in (None, name), f"{row.names} filed under {name}"


def test_every_registered_op_has_an_entry_with_a_kernel_example():
    missing = sorted(n for n in REGISTRY if OPS.get(n) is None or OPS[n].kernel_example is None)
    assert not missing, f"add forward examples for {missing} to tests/opinfo/kernel_core.py"
    assert set(KERNEL_EXAMPLES) <= set(OPS)


def test_second_order_names_a_case():
    names = {c.name for c in GRADIENT_CASES}
    assert set(SECOND_ORDER) <= names
    assert any(info.second_order for info in OPS.values())


def test_declared_errors_are_exception_classes():
    for row in ROWS:
        declared = row.raises if isinstance(row.raises, tuple) else (row.raises,)
        for error in declared:
            assert isinstance(error, type) and issubclass(error, Exception), (row.names, error)
