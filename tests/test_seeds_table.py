"""The seeds' concordance (docs/concepts/seeds.md) cannot drift: the page is the table's
rendering, and every code location the table names resolves."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs"))
import seeds_table  # noqa: E402


def _resolve(where: str):
    module, _, path = where.partition(":")
    obj = importlib.import_module(module)
    for part in path.split(".") if path else ():
        obj = getattr(obj, part)
    return obj


def test_every_location_resolves_except_the_pending_ones():
    missing = set()
    for row in seeds_table.ROWS:
        try:
            _resolve(row[3])
        except (ImportError, AttributeError):
            missing.add(row[3])
    assert missing == seeds_table.PENDING, (
        f"not found: {sorted(missing - seeds_table.PENDING)}; found now, so delete from "
        f"PENDING: {sorted(seeds_table.PENDING - missing)}"
    )


def test_every_seed_file_lesson_and_drawing_exists():
    seeds = {file for file, _ in seeds_table.SEEDS.values()}
    assert {row[0] for row in seeds_table.ROWS} == set(seeds_table.SEEDS)
    shared = Path("/work/shared/seeds")
    if shared.is_dir():
        assert seeds <= {p.name for p in shared.iterdir()}
    from tinygrad_edu import viz

    for _, _, _, _, lesson, drawing in seeds_table.ROWS:
        if lesson is not None:
            assert (ROOT / "notebooks" / f"{lesson}.py").exists(), lesson
        if drawing is not None:
            assert callable(getattr(viz, drawing.removeprefix("viz."))), drawing


def test_the_page_is_current():
    page = seeds_table.PAGE.read_text(encoding="utf-8")
    assert page == seeds_table.render(), "run `python docs/seeds_table.py` to update the page"


def test_the_page_is_in_the_site_navigation():
    assert "concepts/seeds.md" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
