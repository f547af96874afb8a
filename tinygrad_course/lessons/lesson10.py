"""Lesson 10's exercises: which queue runs each node, how long a backward over two devices
takes, a checkpoint that calls backward inside backward.

>>> [ex.number for ex in EXERCISES]
['10.1', '10.2', '10.3']
"""

from __future__ import annotations

import re

import numpy as np

from .checks import gradient_mismatch
from .exercise import Exercise, Verdict, Wrong, diagnose

__all__ = ["EXERCISES", "lanes", "finish_time", "checkpoint", "cross_device_graph", "block",
           "observed_lanes"]  # fmt: skip


# -- 10.1 which queue runs each node ----------------------------------------------------------
def cross_device_graph():
    """The lesson's graph: ``x`` on the CPU, ``w`` on ``sim:0``; returns ``(loss, names)``.

    ``loss = sum(3 * tanh(x.to("sim:0") @ w).to("cpu"))``.
    """
    import tinygrad_edu as tg  # noqa: PLC0415

    x = tg.tensor([[1.0, 2.0]], requires_grad=True)
    w = tg.tensor([[0.5], [-1.0]], requires_grad=True, device="sim:0")
    y = (x.to("sim:0") @ w).tanh()
    loss = (y.to("cpu") * 3).sum()
    return loss, {"x": x, "w": w, "y": y, "loss": loss}


def observed_lanes(loss, names) -> dict:
    """Run ``loss.backward()`` and return node name (as the drawings name it) -> the device
    of the queue that ran it, as the engine reports it."""
    import threading  # noqa: PLC0415

    from tinygrad_edu.eager import Observer, engine_threads, observe  # noqa: PLC0415
    from tinygrad_edu.viz import node_names  # noqa: PLC0415

    label = node_names(loss, names=names)
    ran, lock = {}, threading.Lock()

    class Lanes(Observer):
        def node_started(self, task, node, grads):
            if node in label:
                with lock:
                    ran[label[node]] = engine_threads.current_queue_device()

    with observe(Lanes()):
        loss.backward(retain_graph=True)
    return ran


def _right_lanes() -> dict:
    return observed_lanes(*cross_device_graph())


def _key(name) -> str:
    """A node name without PyTorch's overload number (``MulBackward0`` -> ``MulBackward``), so
    that either spelling of the drawing's names is understood."""
    return re.sub(r"Backward0\b", "Backward", str(name))


def _grade_lanes(fn) -> Verdict:
    want = {_key(k): v for k, v in lanes.values().items()}
    got = fn()
    if not isinstance(got, dict):
        return Verdict(False, f"returned a {type(got).__name__}", "return a dict: node name -> "
                       "'cpu' or 'sim:0'")  # fmt: skip
    got = {_key(k): v for k, v in got.items()}
    missing = [k for k in want if k not in got]
    if missing:
        return Verdict(False, f"no queue for {', '.join(missing)}", "give every node of the "
                       "drawing, named as the drawing names it")  # fmt: skip
    wrong = [k for k in want if got[k] != want[k]]
    if not wrong:
        return Verdict(True, f"all {len(want)} nodes on the right queue")
    message = "wrong queue for " + ", ".join(f"{k} (not {got[k]!r})" for k in wrong)
    devices = sorted(set(want.values()))
    unknown = [k for k in wrong if got[k] not in devices]
    if unknown:
        k = unknown[0]
        return Verdict(False, message, f"{k}: {got[k]!r} is not a device of this graph; its "
                       f"tensors live on {' and '.join(map(repr, devices))} (x on 'cpu', w on "
                       "'sim:0'), and each queue belongs to one of them")  # fmt: skip
    leaves = [k for k in wrong if k.startswith("AccumulateGrad")]
    if all(got[k] == "cpu" for k in want):
        hint = ("only the CPU queue belongs to the calling thread; a node whose gradient lives "
                "on sim:0 goes to sim:0's queue, worked by its own thread")
    elif leaves:
        hint = (f"a leaf's AccumulateGrad runs on the leaf's own device: {leaves[0]} adds into "
                f"a leaf that lives on {want[leaves[0]]!r}")
    elif any(k.startswith("ToCopyBackward") for k in wrong):
        hint = ("a ToCopyBackward node receives the gradient of the copy, so it runs where the "
                "copy lives (the device .to() copied *to*), and sends the gradient back")
    else:
        hint = "a node runs on the queue of the device its forward output lives on"
    return Verdict(False, message, hint)


def _all_cpu():
    return dict.fromkeys(_right_lanes(), "cpu")


def _copies_swapped():
    got = _right_lanes()
    flip = {"cpu": "sim:0", "sim:0": "cpu"}
    return {k: flip[v] if k.startswith("ToCopyBackward") else v for k, v in got.items()}


def _leaf_on_cpu():
    return {k: "cpu" if k.startswith("AccumulateGrad") else v for k, v in _right_lanes().items()}


def _leaf_x_on_sim():
    return {k: "sim:0" if k.startswith("AccumulateGrad") else v for k, v in
            _right_lanes().items()}  # fmt: skip


def _cuda_for_sim():
    return {k: "cuda:0" if v == "sim:0" else v for k, v in _right_lanes().items()}


lanes = Exercise(
    "10.1", "which queue runs each node", _grade_lanes, expected=_right_lanes,
    wrong=[
        Wrong("everything on the caller's queue", _all_cpu,
              "only the CPU queue belongs to the calling thread; a node whose gradient lives "
              "on sim:0 goes to sim:0's queue, worked by its own thread"),
        Wrong("each copy on the device it copies from", _copies_swapped,
              "a ToCopyBackward node receives the gradient of the copy, so it runs where the "
              "copy lives (the device .to() copied *to*), and sends the gradient back"),
        Wrong("AccumulateGrad (w) on the CPU", _leaf_on_cpu,
              "a leaf's AccumulateGrad runs on the leaf's own device: AccumulateGrad (w) adds "
              "into a leaf that lives on 'sim:0'"),
        Wrong("AccumulateGrad (x) on sim:0", _leaf_x_on_sim,
              "a leaf's AccumulateGrad runs on the leaf's own device: AccumulateGrad (x) adds "
              "into a leaf that lives on 'cpu'"),
        Wrong("'cuda:0' for the simulated device", _cuda_for_sim,
              "TanhBackward (y): 'cuda:0' is not a device of this graph; its tensors live on "
              "'cpu' and 'sim:0' (x on 'cpu', w on 'sim:0'), and each queue belongs to one of "
              "them"),
    ],
)  # fmt: skip


# -- 10.2 how long a backward over two devices takes ------------------------------------------
def _reference_finish_time(tasks) -> float:
    """Exercise 10.2's answer, for the check and the teaching cells; the student edition holds
    no copy (its markers strip it)."""
    # BEGIN SOLUTION
    return max(_reference_schedule(tasks).values())
    # END SOLUTION


def _reference_schedule(tasks) -> dict:
    """When each task finishes (the answer's timeline: the student edition holds no copy)."""
    # BEGIN SOLUTION
    done, free = {}, {}
    for t in tasks:
        start = max([free.get(t["device"], 0.0)] + [done[a] for a in t["after"]])
        done[t["name"]] = free[t["device"]] = start + t["cost"]
    return done
    # END SOLUTION


_reference_finish_time.__name__ = "finish_time"


def _one_thread(tasks) -> float:
    return float(sum(t["cost"] for t in tasks))


def _busiest_device(tasks) -> float:
    per = {}
    for t in tasks:
        per[t["device"]] = per.get(t["device"], 0.0) + t["cost"]
    return max(per.values())


def _critical_path(tasks) -> float:
    done = {}
    for t in tasks:
        done[t["name"]] = max([0.0] + [done[a] for a in t["after"]]) + t["cost"]
    return max(done.values())


def _last_in_list(tasks) -> float:
    return _reference_schedule(tasks)[tasks[-1]["name"]]


def _task(name, device, cost, *after):
    return {"name": name, "device": device, "cost": cost, "after": list(after)}


def _schedules():
    """A GPU model with CPU-side work, and three branches, two of them on the GPU."""
    model = [
        _task("loss", "cpu", 1.0), _task("head", "cuda", 2.0, "loss"),
        _task("embedding", "cpu", 3.0, "loss"), _task("layer 2", "cuda", 2.0, "head"),
        _task("layer 1", "cuda", 2.0, "layer 2"), _task("AccumulateGrad (emb)", "cpu", 0.5,
                                                       "embedding"),
        _task("copy back", "cpu", 1.0, "layer 1"),
    ]  # fmt: skip
    branches = [
        _task("root", "cpu", 0.5), _task("a1", "cpu", 1.0, "root"),
        _task("b1", "cuda", 2.0, "root"), _task("c1", "cuda", 2.0, "root"),
        _task("a2", "cpu", 1.0, "a1"), _task("d", "cuda", 1.0, "b1", "a2"),
    ]  # fmt: skip
    # the last task listed is not the last to finish: a long GPU branch ends after it
    uneven = [
        _task("root", "cpu", 0.5), _task("long", "cuda", 5.0, "root"),
        _task("short", "cpu", 1.0, "root"),
    ]  # fmt: skip
    return [("a GPU model with CPU work", model), ("three branches", branches),
            ("a long GPU branch", uneven)]  # fmt: skip


def _finish_expected() -> list:
    """The reference's finishing time of each schedule (recorded in the student edition,
    which holds no reference)."""
    return [_reference_finish_time(tasks) for _, tasks in _schedules()]


def _grade_finish(fn) -> Verdict:
    expected = finish_time.values()
    for (title, tasks), want in zip(_schedules(), expected, strict=True):
        got = fn([dict(t, after=list(t["after"])) for t in tasks])
        # the anticipated mistakes are finish_time's recorded wrong answers: the check
        # recognises them (computed here from their code, they would ship it to students)
        verdict = diagnose(got, want, [],
                           "draw the timeline of this schedule by hand, one row per device, "
                           "and compare each task's start with yours",
                           what=f"{title}: ")  # fmt: skip
        if not verdict.ok:
            return verdict
    return Verdict(True, "the finishing time of three schedules over a CPU and a GPU")


finish_time = Exercise(
    "10.2", "how long a backward over two devices takes", _grade_finish,
    expected=_finish_expected,
    wrong=[
        Wrong("one thread for everything", _one_thread,
              "that is one thread running every node; here each device has its own thread, so "
              "their work overlaps"),
        Wrong("the busiest device's total", _busiest_device,
              "a task also waits for the tasks in its 'after' list: a device can sit idle "
              "until the gradients it needs arrive"),
        Wrong("the longest chain, devices shared freely", _critical_path,
              "one device runs one task at a time: a task also waits until its device is free"),
        Wrong("the finish of the last task listed", _last_in_list,
              "that is when the last task in the list finishes; the backward ends when the "
              "last of all its tasks ends, whichever that is"),
    ],
    hints=[("KeyError", "", "keep the finishing time of every task by name (a dict), and the "
            "time each device becomes free (another dict, starting at 0)")],
    fallback=_reference_finish_time,
)  # fmt: skip


# -- 10.3 a checkpoint: backward inside backward ----------------------------------------------
def block(x):
    r"""The lesson's block: $e^{x \tanh x}$, elementwise."""
    return (x * x.tanh()).exp()


def _grade_checkpoint(fn) -> Verdict:
    import tinygrad_edu as tg  # noqa: PLC0415
    from tinygrad_edu.eager import Observer, observe  # noqa: PLC0415

    rng = np.random.default_rng(3)
    values, p = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    x = tg.tensor(values, requires_grad=True, dtype="float64")
    out = fn(x)
    if not isinstance(out, tg.Tensor):
        return Verdict(False, f"returned a {type(out).__name__}", "return the tensor that "
                       "Checkpoint.apply(x) gives")  # fmt: skip
    want = block(tg.tensor(values, dtype="float64")).numpy(force=True)
    verdict = diagnose(out.numpy(force=True), want, [], "forward returns block(x)", atol=1e-12,
                       what="forward: ")  # fmt: skip
    if not verdict.ok:
        return verdict
    kept = [n.name() for n, _ in (out.grad_fn.next_functions if out.grad_fn else ())]
    if out.grad_fn is None or kept != ["AccumulateGrad"]:
        return Verdict(False, "the output's graph is not one Checkpoint node on x",
                       "compute block(x) inside Checkpoint.forward (it runs without recording "
                       "a graph) and return Checkpoint.apply(x)")  # fmt: skip

    class Calls(Observer):
        def begin(self, task):
            self.depths.append(task.depth)

    calls = Calls()
    calls.depths = []
    with observe(calls):
        (out * tg.tensor(p, dtype="float64")).sum().backward()
    xs = tg.tensor(values, requires_grad=True, dtype="float64")
    (block(xs) * tg.tensor(p, dtype="float64")).sum().backward()
    plain = tg.tensor(values, requires_grad=True, dtype="float64")
    block(plain).sum().backward()
    if x.grad is None:
        return Verdict(False, "x.grad is None after backward", "return the gradient for x from "
                       "backward")  # fmt: skip
    mistakes = [
        (plain.grad.numpy(), "the gradient must go through g, the gradient arriving at the "
         "output: pass grad_outputs=g to tg.grad (or y.backward(g))"),
    ]  # fmt: skip
    verdict = diagnose(x.grad.numpy(), xs.grad.numpy(), mistakes, "your backward "
                       "gives another gradient: does it differentiate block itself, at the "
                       "saved x, weighted by g?", atol=1e-9, what="x.grad: ")  # fmt: skip
    if not verdict.ok:
        return verdict
    if max(calls.depths) < 1:
        return Verdict(False, "the gradient is right, but backward ran no backward of its own",
                       "recompute block(xd) and differentiate it with tg.grad (a nested, "
                       "reentrant backward): that is what a checkpoint does")  # fmt: skip
    problem = gradient_mismatch(fn, [values])
    if problem is not None:
        return Verdict(False, problem, "compare your backward with the derivative of block")
    return Verdict(True, "forward keeps only x; backward recomputes block and runs a nested "
                   "backward on the same thread; gradients match central differences")  # fmt: skip


def _checkpoint(detach=True, use_g=True, grad_mode=True, by_hand=False):
    import tinygrad_edu as tg  # noqa: PLC0415

    class Checkpoint(tg.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return block(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            if by_hand:
                t = x.tanh()
                return g * block(x) * (t + x * (1 - t * t))
            if detach:
                x = x.detach().requires_grad_()
            with tg.enable_grad() if grad_mode else tg.no_grad():
                y = block(x) if use_g else block(x).sum()  # the sum: as if the seed were ones
            return tg.grad(y, x, grad_outputs=g if use_g else None)[0]

    return Checkpoint.apply


def _reference_checkpoint(x):
    """Exercise 10.3's answer, for the check and the teaching cells; the student edition holds
    no copy (its markers strip it)."""
    # BEGIN SOLUTION
    return _checkpoint()(x)
    # END SOLUTION


_reference_checkpoint.__name__ = "checkpoint"


checkpoint = Exercise(
    "10.3", "a checkpoint: backward inside backward", _grade_checkpoint,
    wrong=[
        Wrong("recomputed without enable_grad", _checkpoint(grad_mode=False),

              "the recomputation recorded no graph: inside backward grad mode is off (as in "
              "PyTorch), and the saved x is cut from the graph; recompute from a fresh tensor "
              "that requires grad, with grad mode turned back on (see the lesson's section on "
              "grad modes)"),
        Wrong("g ignored", _checkpoint(use_g=False),
              "the gradient must go through g, the gradient arriving at the output: pass "
              "grad_outputs=g to tg.grad (or y.backward(g))"),
        Wrong("recomputed from the saved x as it is", _checkpoint(detach=False),

              "the recomputation recorded no graph: inside backward grad mode is off (as in "
              "PyTorch), and the saved x is cut from the graph; recompute from a fresh tensor "
              "that requires grad, with grad mode turned back on (see the lesson's section on "
              "grad modes)"),
        Wrong("the derivative by hand", _checkpoint(by_hand=True),
              "recompute block(xd) and differentiate it with tg.grad (a nested, reentrant "
              "backward): that is what a checkpoint does"),
        Wrong("block(x) without a Function", lambda x: block(x),
              "compute block(x) inside Checkpoint.forward (it runs without recording a graph) "
              "and return Checkpoint.apply(x)"),
    ],
    hints=[("RuntimeError", "does not require grad",
            "the recomputation recorded no graph: inside backward grad mode is off (as in "
            "PyTorch), and the saved x is cut from the graph; recompute from a fresh tensor "
            "that requires grad, with grad mode turned back on (see the lesson's section on "
            "grad modes)"),
           ("RuntimeError", "created implicitly", "y is not a scalar: differentiate it with "
            "the gradient arriving at the output, tg.grad(y, xd, grad_outputs=g)")],
    fallback=_reference_checkpoint,
)  # fmt: skip

EXERCISES = (lanes, finish_time, checkpoint)
