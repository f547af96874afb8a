"""Lesson 6's exercises: SGD with momentum by hand, the symbolic update node.

>>> [ex.number for ex in EXERCISES]
['6.1', '6.2']
"""

from __future__ import annotations

import numpy as np

from .as_built import as_built, later
from .exercise import Exercise, Verdict, Wrong, diagnose

__all__ = ["EXERCISES", "momentum_step", "sgd_update_nodes"]


# -- 6.1 SGD with momentum, by hand -----------------------------------------------------------
def _f_grad(p):
    return 2 * (p - 1) * p**2 + 2 * (p - 1) ** 2 * p  # d/dp of (p - 1)² p²


_NO_VELOCITY = ("keep a velocity, a running sum of the gradients that decays by mu each step, "
                "and step with it in place of the bare gradient")
_DAMPENED = ("no (1 - mu) factor: this momentum adds the whole gradient g_t to the decayed "
             "velocity")


_LR, _MU, _START = 0.05, 0.9, (1.8, -0.6, 0.3)


def _momentum_expected() -> list:
    """``[(p, its momentum buffer)]`` after each of 5 steps of ``tg.optim.SGD(momentum=0.9)``
    on the lesson's function (recorded in a student edition: on day one its engine, which the
    optimizer's gradients need, is the student's unwritten A2)."""
    import tinygrad_edu as tg  # noqa: PLC0415

    param = tg.nn.Parameter(np.array(_START))
    reference = tg.optim.SGD([param], lr=_LR, momentum=_MU)
    steps = []
    for _ in range(5):
        reference.zero_grad()
        ((param - 1) ** 2 * param**2).sum().backward()
        reference.step()
        buffer = reference.state[param]["momentum_buffer"]
        buffer = buffer.numpy() if hasattr(buffer, "numpy") else buffer
        steps.append((param.numpy(force=True).tolist(), np.asarray(buffer).tolist()))
    return steps


def _grade_momentum(fn) -> Verdict:
    lr, mu = _LR, _MU
    mine, velocity = np.array(_START), None
    for step, (want_p, want_b) in enumerate(momentum_step.values(), 1):
        result = fn(mine.copy(), _f_grad(mine), None if velocity is None else velocity.copy(),
                    lr, mu)  # fmt: skip
        if not (isinstance(result, tuple) and len(result) == 2):
            return Verdict(
                False,
                f"step {step}: returned {type(result).__name__}",
                "return the pair (new p, new b)",
            )
        new_p, new_b = (np.asarray(v, dtype=np.float64) for v in result)
        # the anticipated mistakes are momentum_step's recorded wrong answers
        verdict = diagnose(new_p, np.array(want_p), [], "work out b and p for "
                           "the first two steps by hand with the lesson's momentum formula "
                           "and compare them with yours", atol=1e-6, rtol=1e-6,
                           what=f"p after step {step}: ")  # fmt: skip
        if not verdict.ok:
            return verdict
        if not np.allclose(new_b, np.array(want_b)):
            return Verdict(
                False,
                f"step {step}: the velocity returned is not the updated one",
                "return the new velocity too, as the second value",
            )
        mine, velocity = new_p, new_b
    return Verdict(True, "the same parameters as tg.optim.SGD(momentum=0.9) after each of 5 steps")


def _plain_sgd(p, g, b, lr, mu):
    return p - lr * g, g


def _old_velocity(p, g, b, lr, mu):
    new_b = g.copy() if b is None else mu * b + g
    return p - lr * (np.zeros_like(p) if b is None else b), new_b


def _dampened(p, g, b, lr, mu):
    b = (1 - mu) * g if b is None else mu * b + (1 - mu) * g
    return p - lr * b, b


momentum_step = Exercise(
    "6.1", "SGD with momentum, by hand", _grade_momentum, expected=_momentum_expected,
    wrong=[
        Wrong("no momentum at all", _plain_sgd,
              _NO_VELOCITY),
        Wrong("the step uses the old velocity", _old_velocity,
              "step with the new velocity b_t (computed from this step's g), not the previous "
              "one"),
        Wrong("a (1 - mu) dampening factor", _dampened,
              _DAMPENED),
    ],
)  # fmt: skip


# -- 6.2 the symbolic update node -------------------------------------------------------------
def _train(make_updates, steps=5):
    from tinygrad_edu.symbolic import Variable, gradients, matmul, softmax_cross_entropy  # noqa: PLC0415
    from tinygrad_edu.symbolic import training as st  # noqa: PLC0415

    rng = np.random.default_rng(2)
    xv = rng.normal(size=(5, 4)).astype(np.float32)
    yv = np.eye(3, dtype=np.float32)[[0, 1, 2, 1, 0]]
    sc = st.Scope()
    W = sc.parameter("W", np.random.default_rng(1).normal(0, 0.5, (3, 4)).astype(np.float32))
    b = sc.parameter("b", np.zeros(3, np.float32))
    x, y = Variable("x"), Variable("y")
    loss = softmax_cross_entropy(matmul(x, W, trans_B=True) + b, y)
    if make_updates is None:
        updates = st.SGD(lr=0.1).minimize(loss, [W, b])
    else:
        updates = []
        for p, g in zip([W, b], gradients(loss, [W, b])):
            made = make_updates(sc, p, g, 0.1)
            if not isinstance(made, (list, tuple)) or not all(isinstance(u, st.Update)
                                                               for u in made):  # fmt: skip
                return made
            updates += made
    runner = st.TrainingExecutor([loss], updates)
    for _ in range(steps):
        runner.run({x: xv, y: yv})
    return np.concatenate([sc["W"].ravel(), sc["b"].ravel()])


def _one_step(make_updates):
    """W and b after one step of ``make_updates`` for a given gradient (fed to a Variable in
    place of the gradient node): the updates' new values computed as they are built, where the
    symbolic engine that trains is an unwritten assignment (a student edition before A1);
    None where those values are not known (the Executor then says what it needs)."""
    from tinygrad_edu.symbolic import Variable  # noqa: PLC0415
    from tinygrad_edu.symbolic import training as st  # noqa: PLC0415

    rng = np.random.default_rng(6)
    sc = st.Scope()
    params = [sc.parameter("W", rng.normal(0, 0.5, (3, 4)).astype(np.float32)),
              sc.parameter("b", rng.normal(0, 0.5, 3).astype(np.float32))]  # fmt: skip
    new = {p.name: sc[p.name] for p in params}
    for p in params:
        g = Variable(f"d{p.name}")
        feeds = {p: sc[p.name], g: rng.normal(size=sc[p.name].shape).astype(np.float32)}
        with as_built(feeds) as built:
            made = make_updates(sc, p, g, 0.1)
        if not isinstance(made, (list, tuple)) or not all(isinstance(u, st.Update)
                                                           for u in made):  # fmt: skip
            return made
        for update in made:
            value = built.value(update.value)
            if value is None:
                return None
            new[update.target.name] = value
    return np.concatenate([np.ravel(new[p.name]) for p in params])


def _grade_one_step(fn, unwritten: str) -> Verdict:
    """6.2's check where training needs the unwritten symbolic engine: one step's update."""
    from tinygrad_edu.symbolic import training as st  # noqa: PLC0415

    got = _one_step(fn)
    if got is None:
        return None
    if not isinstance(got, np.ndarray):
        return Verdict(False, f"returned a {type(got).__name__}",
                       "return a list of updates: [st.Update(p, new value)]")  # fmt: skip
    mistakes = [
        (_one_step(lambda sc, p, g, lr: [st.Update(p, p + lr * g)]), "the loss went up: step "
         "against the gradient, not along it (the sign)"),
        (_one_step(lambda sc, p, g, lr: [st.Update(p, p - g)]), "the steps are too large: "
         "scale the gradient by the learning rate lr"),
        (_one_step(lambda sc, p, g, lr: [st.Update(p, p)]), "W and b never changed: the new "
         "value you give p must differ from p"),
        (_one_step(lambda sc, p, g, lr: [st.Update(p, p - lr * lr * g)]), "the steps are too "
         "small: the learning rate is applied once"),
    ]  # fmt: skip
    verdict = diagnose(
        got,
        _one_step(lambda sc, p, g, lr: st.SGD(lr=lr)._rule(p, g)),  # the library's SGD nodes
        mistakes,
        "W and b differ from plain gradient descent's after one step: which term of the SGD "
        "rule (lesson 6's formula) did your update change?",
        atol=1e-6,
        rtol=1e-5,
        what="W and b after one step for a given gradient: ",
    )
    if not verdict.ok:
        return verdict
    return Verdict(True, verdict.message + later(unwritten, "5 steps of training with "
                                                 "gradients() and a TrainingExecutor"))


def _grade_updates(fn) -> Verdict:
    from tinygrad_edu.symbolic import training as st  # noqa: PLC0415

    from .recorded import stub_task  # noqa: PLC0415

    try:
        got = _train(fn)
    except NotImplementedError as error:  # a student edition before A1: gradients(), Executor
        unwritten = stub_task(error)
        verdict = None
        if unwritten is not None and unwritten.startswith("A1."):
            verdict = _grade_one_step(fn, unwritten)
        if verdict is None:
            raise
        return verdict
    if not isinstance(got, np.ndarray):
        return Verdict(
            False,
            f"returned a {type(got).__name__}",
            "return a list of updates: [st.Update(p, new value)]",
        )
    start = _train(lambda sc, p, g, lr: [st.Update(p, p)], steps=1)
    # the other anticipated mistakes are sgd_update_nodes's recorded wrong answers: the check
    # recognises them (an update rule for each here would be the solution with one token
    # changed)
    mistakes = [(start, "W and b never changed: the new value you give p must differ from p")]
    return diagnose(
        got,
        _train(None),
        mistakes,
        "W and b differ from plain gradient descent's after 5 steps: which term of the SGD "
        "rule (lesson 6's formula) did your update change?",
        atol=1e-6,
        rtol=1e-5,
        what="W and b after 5 steps: ",
    )


def _update(sign=-1.0, scaled=True, twice=False):
    from tinygrad_edu.symbolic import training as st  # noqa: PLC0415

    def answer(scope, p, g, lr):
        step = lr * lr if twice else lr
        return [st.Update(p, p + sign * step * g if scaled else p + sign * g)]

    return answer


sgd_update_nodes = Exercise(
    "6.2", "the symbolic update node", _grade_updates,
    wrong=[
        Wrong("up the gradient", _update(+1.0),
              "the loss went up: step against the gradient, not along it (the sign)"),
        Wrong("without the learning rate", _update(scaled=False),
              "the steps are too large: scale the gradient by the learning rate lr"),
        Wrong("a bare node instead of a list of updates", lambda scope, p, g, lr: p - lr * g,
              "return a list of updates: [st.Update(p, new value)]"),
        Wrong("p kept as it is", _update(scaled=False, sign=0.0),
              "W and b never changed: the new value you give p must differ from p"),
        Wrong("the learning rate applied twice", _update(twice=True),
              "the steps are too small: the learning rate is applied once"),
    ],
)  # fmt: skip

EXERCISES = (momentum_step, sgd_update_nodes)
