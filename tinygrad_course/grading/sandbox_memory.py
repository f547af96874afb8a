"""Bounding a child's memory so that, under pressure, it alone is killed
(see :mod:`tinygrad_course.grading.sandbox`).

Two things decide whom the kernel's out-of-memory killer takes:

- **A memory cgroup per child** (cgroup v2 ``memory.max``, or v1 ``memory.limit_in_bytes``),
  made below the grader's own cgroup: the child and every process it starts are charged to
  it, and when they reach the limit the killer chooses among them only. Root only; where
  the kernel or the container offers no writable memory controller, :func:`confine` says so
  and the child's own ``RLIMIT_AS``/``RLIMIT_DATA`` (set in ``child.py``) still bound each of
  its processes.
- **The child's OOM score**, set to 1000 by the grader (root, with CAP_SYS_RESOURCE): the
  kernel then also records 1000 as the lowest value the child and its descendants may set
  without that capability, so a submission that lowers its score to push the killer onto a
  bystander (another student's grader, or ``grade-batch`` itself) gets EACCES. Without that
  capability (a container's default set) the score is no floor, and the cgroup is the bound.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

__all__ = ["MemoryCgroup", "can_set_floor", "confine", "set_oom_score"]

_MOUNT = Path("/sys/fs/cgroup")


_CAP_SYS_RESOURCE = 24


def can_set_floor() -> bool:
    """Whether this process holds CAP_SYS_RESOURCE, without which the score it writes for a
    child is no floor (Docker's default capabilities lack it): the child's memory cgroup is
    then what keeps the killer off bystanders."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) >> _CAP_SYS_RESOURCE & 1)
    return False


def set_oom_score(pid: int, score: int = 1000) -> bool:
    """Set ``pid``'s OOM score adjustment; with CAP_SYS_RESOURCE this is also the floor it
    and its descendants cannot go below. Returns whether it is a floor."""
    try:
        with open(f"/proc/{pid}/oom_score_adj", "w") as f:
            f.write(str(score))
    except OSError:
        return False
    return can_set_floor()


def _own_cgroups() -> dict[str, str]:
    """controller (``""`` for cgroup v2) -> this process's cgroup path."""
    out = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for name in controllers.split(",") if controllers else [""]:
                out[name] = path
    return out


def _parents() -> list[tuple[Path, str]]:
    """Folders where a child cgroup with a memory limit could be made: (folder, limit file)."""
    own = _own_cgroups()
    found = []
    if "memory" in own:  # cgroup v1 memory controller
        found.append((_MOUNT / "memory" / own["memory"].lstrip("/"), "memory.limit_in_bytes"))
    if "" in own:
        for top in (_MOUNT, _MOUNT / "unified"):
            if (top / "cgroup.controllers").is_file():
                found.append((top / own[""].lstrip("/"), "memory.max"))
                break
    return found


class MemoryCgroup:
    """One child's memory cgroup: made with a limit, given the child, removed after it."""

    def __init__(self, path: Path, limit_file: str):
        self.path, self.limit_file = path, limit_file

    @property
    def limit(self) -> int | None:
        with contextlib.suppress(OSError, ValueError):
            text = (self.path / self.limit_file).read_text().strip()
            return None if text == "max" else int(text)
        return None

    def add(self, pid: int) -> None:
        (self.path / "cgroup.procs").write_text(str(pid))

    def remove(self) -> None:
        """Remove the cgroup (its processes must have ended: the sweep killed them)."""
        for _ in range(100):  # a killed process leaves its cgroup a moment after it dies
            try:
                os.rmdir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.02)


def confine(pid: int, limit: int | None, name: str) -> tuple[MemoryCgroup | None, str]:
    """Move ``pid`` into a new memory cgroup limited to ``limit`` bytes.

    Returns the cgroup and "" or None and why there is none (not root, no memory
    controller, or none writable here): the caller still has the rlimits."""
    if limit is None:
        return None, "no memory limit asked for"
    if os.geteuid() != 0:
        return None, "not root"
    why = "no memory cgroup controller here"
    for parent, limit_file in _parents():
        path = parent / name
        try:
            path.mkdir()
        except OSError as e:
            why = f"cannot make a cgroup in {parent} ({e.strerror})"
            continue
        group = MemoryCgroup(path, limit_file)
        try:
            (path / limit_file).write_text(str(limit))
            v2 = limit_file == "memory.max"
            swap = "memory.swap.max" if v2 else "memory.memsw.limit_in_bytes"
            with contextlib.suppress(OSError):  # swap accounting is optional
                (path / swap).write_text("0" if v2 else str(limit))
            group.add(pid)
        except OSError as e:
            why = f"cannot limit memory in {path} ({e.strerror})"
            group.remove()
            continue
        return group, ""
    return None, why
