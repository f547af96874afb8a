"""docs/coming-from-pytorch.md lists every public name: its generated part is current, and no
public name is missing from it (checked without PyTorch too)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "coming-from-pytorch.md"


def _generator():
    spec = importlib.util.spec_from_file_location("pytorch_names", ROOT / "docs" /
                                                  "pytorch_names.py")  # fmt: skip
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_public_name_is_on_the_page():
    gen = _generator()
    text = PAGE.read_text(encoding="utf-8")
    listed = set(re.findall(r"(?<!`)`([^`\n]+)`(?!`)", text))  # inline code, not fences
    missing = [f"{prefix}.{name}" for _, prefix, names in gen.sections() for name in names
               if gen.OPERATORS.get(name, name) not in listed]  # fmt: skip
    assert not missing, f"not on {PAGE.name}: {missing}; run python docs/pytorch_names.py"


def test_generated_tables_are_current():
    import torch  # noqa: F401  (installed by make test)
    gen = _generator()
    assert gen.current() == gen.render(), "run python docs/pytorch_names.py"


def test_the_page_is_in_the_site_nav_and_the_readme():
    assert "coming-from-pytorch.md" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "docs/coming-from-pytorch.md" in (ROOT / "README.md").read_text(encoding="utf-8")
