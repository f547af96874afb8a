"""Copy a student's submitted files over the library copy in a Gradescope autograder.

Standard library only: the autograder runs it as a script (``python copy_submission.py
SUBMISSION LIBRARY MANIFEST``) before any of the student's code is imported. Only the files
listed in the manifest's ``submission_files`` (the files with solution regions) may be
replaced, so a submission cannot overwrite the tests or the grading code.

A submitted file matches an allowed path when its path equals it or ends with it (a whole
repository uploaded in a folder), or else when its file name is that of exactly one allowed
path (files uploaded one by one).

>>> match_target("my-repo/pkg/ops.py", ["pkg/ops.py", "pkg/nn.py"])
'pkg/ops.py'
>>> match_target("nn.py", ["pkg/ops.py", "pkg/nn.py"])
'pkg/nn.py'
"""

from __future__ import annotations

import json
import os
import shutil
import sys

__all__ = ["match_target", "copy_submission", "main"]

_SKIP_DIRS = {"__MACOSX", "__pycache__", ".git"}


def match_target(rel: str, allowed: list[str]) -> str | None:
    """The allowed path that the submitted relative path ``rel`` replaces (None if none)."""
    rel = rel.replace(os.sep, "/")
    by_suffix = [a for a in allowed if rel == a or rel.endswith("/" + a)]
    if by_suffix:
        return max(by_suffix, key=len)
    by_name = [a for a in allowed if a.rsplit("/", 1)[-1] == rel.rsplit("/", 1)[-1]]
    return by_name[0] if len(by_name) == 1 else None


def copy_submission(submission: str, library: str, allowed: list[str]) -> list[str]:
    """Copy matching files; return one log line per submitted file."""
    log = []
    for root, dirs, files in os.walk(submission):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        for name in sorted(files):
            path = os.path.join(root, name)
            rel = os.path.relpath(path, submission).replace(os.sep, "/")
            target = match_target(rel, allowed)
            if target is None:
                log.append(f"ignored   {rel} (not one of the files to submit)")
                continue
            shutil.copyfile(path, os.path.join(library, target))
            log.append(f"used      {rel} -> {target}")
    if not any(line.startswith("used") for line in log):
        log.append("no submitted file matched; expected one of: " + ", ".join(allowed))
    return log


def main(argv: list[str] | None = None) -> int:
    submission, library, manifest = (argv if argv is not None else sys.argv[1:])[:3]
    with open(manifest, encoding="utf-8") as f:
        allowed = json.load(f)["submission_files"]
    for line in copy_submission(submission, library, allowed):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
