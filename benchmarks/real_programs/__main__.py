"""Run the published programs on PyTorch and on tinygrad_edu; write the table.

    python -m benchmarks.real_programs                  # all, table into docs/performance.md
    python -m benchmarks.real_programs --only gpt --print-only
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re

import numpy as np

from benchmarks.real_programs import ROOT, run_all
from benchmarks.real_programs.programs import BY_NAME

DOC = os.path.join(ROOT, "docs", "performance.md")
START, END = "<!-- real-programs:start -->", "<!-- real-programs:end -->"


def _loss(x: float) -> str:
    return f"{x:.6g}"


def table(rows: list[dict]) -> str:
    import torch

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        f"Measured {datetime.date.today()} with `python -m benchmarks.real_programs`; "
        f"Python {platform.python_version()}, numpy {np.__version__}, torch {torch.__version__}; "
        f"one thread each; load average at the end: {load:.1f}.",
        "",
        "| program | what it trains | runs unchanged | steps | first loss PyTorch / ours "
        "| final loss PyTorch / ours | PyTorch s | ours s | ratio |",
        "|---|---|---|---:|---|---|---:|---:|---:|",
    ]
    for row in rows:
        prog = BY_NAME[row["name"]]
        where = f"{prog.repo} `{prog.paths[-1]}`"
        if row["error"]:
            last = row["error"].strip().splitlines()[-1].replace("|", "\\|")
            lines.append(f"| {where} | {prog.kind} | no: `{last}` | | | | "
                         f"{row['t_torch']:.2f} | | |")  # fmt: skip
            continue
        ok = "yes" if row["ok"] else "yes, losses differ"
        first = f"{_loss(row['first'][0])} / {_loss(row['first'][1])}"
        final = f"{_loss(row['final'][0])} / {_loss(row['final'][1])}"
        steps = row["steps"][1] if row["steps"][0] == row["steps"][1] else (
            f"{row['steps'][0]} / {row['steps'][1]}")  # fmt: skip
        lines.append(f"| {where} | {prog.kind} | {ok} | {steps} | {first} | {final} "
                     f"| {row['t_torch']:.2f} | {row['t_ours']:.2f} | {row['ratio']:.2f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", action="append", help="run only this program (repeatable)")
    parser.add_argument("--print-only", action="store_true", help="do not write the doc")
    args = parser.parse_args()
    rows = run_all(args.only)
    text = table(rows)
    print(text)
    if args.print_only or args.only:
        return
    with open(DOC, encoding="utf-8") as f:
        doc = f.read()
    block = f"{START}\n{text}\n{END}"
    doc = re.sub(re.escape(START) + ".*?" + re.escape(END), lambda _: block, doc, flags=re.S)
    with open(DOC, "w", encoding="utf-8") as f:
        f.write(doc)


if __name__ == "__main__":
    main()
