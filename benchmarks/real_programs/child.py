"""Run one program on one library, in a process of its own.

    python -m benchmarks.real_programs.child NAME LIBRARY WORKDIR OUT_JSON

``LIBRARY`` is ``torch`` or ``tinygrad_edu``. The program's source is executed with
``import torch`` (and ``torch.nn``, ``torch.optim``, ``torch.utils.data`` ...) meaning
``LIBRARY``; its own other files (``import data``, ``from model import ...``) are loaded from
the stored sources the same way. Nothing in the program is changed beyond the size
replacements in ``programs.py``. The runner watches from outside:

- **losses**: every ``Tensor.backward()`` on a one-element tensor records its value, so the
  curve is the sequence of losses the program trained on, whatever it prints.
- **initial parameters** (every program): the first time the program itself calls a module
  (a call written in the program's source, not one inside the library), PyTorch's run saves that
  module's ``state_dict()``; our run copies those values into the same module at the same
  moment. So both start from PyTorch's initialisation, which our generator does not reproduce.
- **random draws** (every program): ``torch.randn``, ``randint``, ``randperm``,
  ``multinomial`` ... called by the program itself are recorded in PyTorch's run and replayed,
  in order, in ours (the values are copied into the tensor our call made, which keeps its
  dtype and shape; a shape mismatch or an exhausted record stops the replay).
- **dropout masks**: ``torch.nn.functional.dropout`` (what ``nn.Dropout`` calls) in PyTorch's
  run computes its mask by dropping out a tensor of ones and multiplies, recording the mask;
  ours multiplies by the recorded mask. The masks then agree, so programs with dropout are
  compared exactly too (a dropout inside ``nn.LSTM(dropout=...)`` is not reached by this).
- **shuffling**: ``RandomSampler`` (what ``DataLoader(shuffle=True)`` uses) draws its order from
  one numpy generator seeded 0 in both runs, so both see the batches in the same order.

The wall time is that of executing the program's scripts. Before the clock starts, the
library is imported and warmed up (``warm_up``: one small training step through the layers the
programs use), because PyTorch's first optimizer step alone spends seconds importing its
compiler machinery; a one-time cost like that is not what the comparison is about.
"""

from __future__ import annotations

import builtins
import importlib
import json
import os
import sys
import time
import traceback
import types

import numpy as np

from benchmarks.real_programs import fakes
from benchmarks.real_programs.programs import BY_NAME, write_data

RANDOM = ("randn", "rand", "randint", "randperm", "randn_like", "rand_like", "randint_like",
          "multinomial", "normal", "bernoulli")  # fmt: skip


def _from_program(depth: int) -> bool:
    return sys._getframe(depth + 1).f_code.co_filename.startswith("<program ")


def _numpy(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), copy=True)


class Watch:
    """The hooks described in the module docstring, for one run."""

    def __init__(self, lib, lib_name: str, exact: bool, record: str):
        self.lib, self.torch = lib, lib_name == "torch"
        self.exact, self.record = exact, record
        self.losses: list[float] = []
        self.notes: list[str] = []
        self.snaps: list[dict] = []  # initial state_dicts, in the order of first calls
        self.tape: list[np.ndarray] = []  # the program's random draws
        self.masks: list[np.ndarray] = []  # dropout masks (0 or 1 / (1 - p))
        self.synced: set[int] = set()
        self.keep: list = []  # modules seen, kept alive so their ids stay unique
        if not self.torch:
            with np.load(record + ".npz") as f:
                n_snaps, n_tape = int(f["n_snaps"]), int(f["n_tape"])
                for i in range(n_snaps):
                    keys = [str(k) for k in f[f"snap{i}_keys"]]
                    self.snaps.append({k: f[f"snap{i}_{j}"] for j, k in enumerate(keys)})
                self.tape = [f[f"tape{i}"] for i in range(n_tape)]
                self.masks = [f[f"mask{i}"] for i in range(int(f["n_masks"]))]
        self.n_used = self.n_synced = self.n_masks = 0

    def install(self) -> None:
        lib = self.lib
        backward = lib.Tensor.backward

        def watched_backward(t, *args, **kwargs):
            if t.numel() == 1:
                self.losses.append(float(t.detach().reshape(()).item()))
            return backward(t, *args, **kwargs)

        lib.Tensor.backward = watched_backward
        sampler = importlib.import_module(lib.__name__ + ".utils.data").RandomSampler
        rng = np.random.default_rng(0)

        def order(s):
            n, k = len(s.data_source), s.num_samples
            if s.replacement:
                for start in range(0, k, 32):
                    yield from rng.integers(0, n, size=min(32, k - start)).tolist()
                return
            for _ in range(k // n):
                yield from rng.permutation(n).tolist()
            yield from rng.permutation(n)[: k % n].tolist()

        sampler.__iter__ = order
        functional = lib.nn.functional
        dropout = functional.dropout

        def watched_dropout(x, p=0.5, training=True, inplace=False):
            if not training or p == 0:
                return dropout(x, p, training, inplace)
            if self.torch:
                mask = dropout(lib.ones_like(x), p, True)
                self.masks.append(_numpy(mask))
            elif self.n_masks < len(self.masks) and self.masks[self.n_masks].shape == x.shape:
                mask = lib.tensor(self.masks[self.n_masks])
                self.n_masks += 1
            else:
                self.notes.append(f"dropout on shape {tuple(x.shape)}: no recorded mask")
                return dropout(x, p, training, inplace)
            return x.mul_(mask) if inplace else x * mask

        functional.dropout = watched_dropout
        module = lib.nn.Module
        call = module.__call__

        def watched_call(m, *args, **kwargs):
            if id(m) not in self.synced and _from_program(1):
                for sub in m.modules():
                    self.synced.add(id(sub))
                    self.keep.append(sub)
                self._sync(m)
            return call(m, *args, **kwargs)

        module.__call__ = watched_call
        for name in RANDOM:
            if hasattr(lib, name):
                setattr(lib, name, self._random(getattr(lib, name), name))

    def _sync(self, m) -> None:
        if self.torch:
            self.snaps.append({k: _numpy(v) for k, v in m.state_dict().items()})
            return
        i, self.n_synced = self.n_synced, self.n_synced + 1
        if i >= len(self.snaps):
            self.notes.append(f"no PyTorch parameters for module {type(m).__name__}")
            return
        snap = self.snaps[i]
        ours = dict(m.state_dict())
        if set(ours) != set(snap):
            self.notes.append(f"synced {type(m).__name__}: keys differ "
                              f"{sorted(set(ours) ^ set(snap))}")  # fmt: skip
        tensors = {**dict(m.named_parameters()), **dict(m.named_buffers())}
        with self.lib.no_grad():
            for k, t in tensors.items():
                if k in snap:
                    t.copy_(self.lib.tensor(snap[k]))
        self.notes.append(f"synced {type(m).__name__}")

    def _random(self, fn, name):
        def draw(*args, **kwargs):
            out = fn(*args, **kwargs)
            if not _from_program(1):
                return out
            if self.torch:
                self.tape.append(_numpy(out))
            elif self.n_used < len(self.tape):
                arr = self.tape[self.n_used]
                if tuple(arr.shape) != tuple(out.shape):
                    self.notes.append(f"{name}: shape {tuple(out.shape)} where PyTorch drew "
                                      f"{arr.shape}; replay stopped")  # fmt: skip
                    self.n_used = len(self.tape)
                    return out
                self.n_used += 1
                with self.lib.no_grad():
                    out.copy_(self.lib.tensor(arr))
            return out

        return draw

    def save(self) -> None:
        if not self.torch:
            return
        arrays = {"n_snaps": np.array(len(self.snaps)), "n_tape": np.array(len(self.tape)),
                  "n_masks": np.array(len(self.masks))}  # fmt: skip
        arrays.update({f"mask{i}": v for i, v in enumerate(self.masks)})
        for i, snap in enumerate(self.snaps):
            arrays[f"snap{i}_keys"] = np.array(list(snap))
            arrays.update({f"snap{i}_{j}": v for j, v in enumerate(snap.values())})
        arrays.update({f"tape{i}": v for i, v in enumerate(self.tape)})
        np.savez(self.record + ".npz", **arrays)


def warm_up(lib) -> None:
    """One step through Linear, Conv2d, LSTM and Embedding with Adam and SGD, and back."""
    F = lib.nn.functional
    conv, lstm = lib.nn.Conv2d(1, 2, 3), lib.nn.LSTM(3, 4, batch_first=True)
    emb, lin = lib.nn.Embedding(5, 3), lib.nn.Linear(4, 3)
    params = [*conv.parameters(), *lstm.parameters(), *emb.parameters(), *lin.parameters()]
    for opt in (lib.optim.Adam(params), lib.optim.SGD(params, lr=0.1)):
        x = F.max_pool2d(F.relu(conv(lib.ones(2, 1, 6, 6))), 2).reshape(2, 2, -1)
        out, _ = lstm(emb(lib.tensor([[1, 2], [3, 4]])) + x.sum(-1, keepdim=True))
        loss = F.cross_entropy(lin(out[:, -1]), lib.tensor([0, 1]))
        opt.zero_grad()
        loss.backward()
        opt.step()


def importer(package: str, load_local):
    """``__import__`` that reads ``torch`` (and ``torch.x``) as ``package`` and loads the
    program's own files (``import data``) from its stored sources."""

    def imp(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0:
            local = load_local(name)
            if local is not None:
                return local
            if name == "torch" or name.startswith("torch."):
                name = package + name[len("torch"):]
        return builtins.__import__(name, globals, locals, fromlist, level)

    return imp


def run(name: str, lib_name: str, workdir: str) -> dict:
    prog = BY_NAME[name]
    lib = importlib.import_module(lib_name)
    if lib_name == "torch":
        lib.set_num_threads(1)
    warm_up(lib)
    fakes.LIB = lib
    fakes.install(lib_name)
    watch = Watch(lib, lib_name, prog.exact, os.path.join(workdir, "..", "record"))
    watch.install()
    files = {os.path.basename(p): os.path.basename(p) for p in prog.paths}
    loaded: dict[str, types.ModuleType] = {}

    def scope(modname: str) -> dict:
        return {"__builtins__": {**vars(builtins), "__import__": imp}, "__name__": modname}

    def load_local(modname: str):
        if modname + ".py" not in files or modname + ".py" in prog.scripts:
            return None
        if modname not in loaded:
            mod = types.ModuleType(modname)
            mod.__dict__.update(scope(modname))
            loaded[modname] = sys.modules[modname] = mod
            code = compile(prog.source(modname + ".py"), f"<program {name}/{modname}.py>", "exec")
            exec(code, mod.__dict__)
        return loaded[modname]

    imp = importer(lib_name, load_local)
    os.chdir(workdir)
    write_data(prog.data, workdir)
    result = {"name": name, "lib": lib_name, "error": None}
    # A program that does not seed itself (pytorch/examples regression draws its target
    # polynomial unseeded) draws the same values on every run: its comparison is the same
    # comparison each time, not a new draw that may amplify rounding more than the last.
    lib.manual_seed(0)
    start = time.perf_counter()
    try:
        for script in prog.scripts:
            main = types.ModuleType("__main__")
            main.__dict__.update(scope("__main__"))
            sys.modules["__main__"] = main
            sys.argv = [script, *prog.argv.get(script, [])]
            code = compile(prog.source(script), f"<program {name}/{script}>", "exec")
            exec(code, main.__dict__)
    except BaseException as exc:  # noqa: BLE001 - the report says what failed and where
        if isinstance(exc, SystemExit) and not exc.code:
            pass
        else:
            result["error"] = "".join(traceback.format_exception(exc)[-12:])
    result["seconds"] = time.perf_counter() - start
    watch.save()
    result.update(losses=watch.losses, notes=watch.notes, replayed=watch.n_used,
                  masks=len(watch.masks), masks_used=watch.n_masks,
                  tape=len(watch.tape), snaps=len(watch.snaps))  # fmt: skip
    return result


def main() -> None:
    name, lib_name, workdir, out = sys.argv[1:5]
    stdout = sys.stdout
    with open(os.path.join(workdir, "..", f"stdout_{lib_name}.txt"), "w") as log:
        sys.stdout = log
        try:
            result = run(name, lib_name, workdir)
        finally:
            sys.stdout = stdout
    with open(out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
