"""Lesson 6's exercises: SGD with momentum by hand, the symbolic update node.

>>> [ex.number for ex in EXERCISES]
['6.1', '6.2']
"""

from __future__ import annotations

import numpy as np

from .exercise import Exercise, Verdict, Wrong, diagnose

__all__ = ["EXERCISES", "momentum_step", "sgd_update_nodes"]


# -- 6.1 SGD with momentum, by hand -----------------------------------------------------------
def _f_grad(p):
    return 2 * (p - 1) * p**2 + 2 * (p - 1) ** 2 * p  # d/dp of (p - 1)² p²


def _grade_momentum(fn) -> Verdict:
    import tinygrad_edu as tg  # noqa: PLC0415

    lr, mu = 0.05, 0.9
    start = np.array([1.8, -0.6, 0.3])
    param = tg.nn.Parameter(start.copy())
    reference = tg.optim.SGD([param], lr=lr, momentum=mu)
    mine, velocity = start.copy(), None
    for step in range(1, 6):
        reference.zero_grad()
        ((param - 1) ** 2 * param**2).sum().backward()
        reference.step()
        result = fn(mine.copy(), _f_grad(mine), None if velocity is None else velocity.copy(),
                    lr, mu)  # fmt: skip
        if not (isinstance(result, tuple) and len(result) == 2):
            return Verdict(
                False,
                f"step {step}: returned {type(result).__name__}",
                "return the pair (new p, new b)",
            )
        new_p, new_b = (np.asarray(v, dtype=np.float64) for v in result)
        b_right = _f_grad(mine) if velocity is None else mu * velocity + _f_grad(mine)
        mistakes = [
            (mine - lr * _f_grad(mine), "keep a velocity: b = mu * b + g, then p - lr * b"),
            (mine - lr * (velocity if velocity is not None else 0 * mine), "step with the new "
             "velocity b_t (computed from this step's g), not the previous one"),
            (mine - lr * ((1 - mu) * _f_grad(mine) + (0 if velocity is None else mu * velocity)),
             "no (1 - mu) factor: b_t = mu * b_(t-1) + g_t"),
        ]  # fmt: skip
        verdict = diagnose(new_p, param.numpy(force=True), mistakes, "work out b and p for "
                           "the first two steps by hand with the lesson's momentum formula "
                           "and compare them with yours", atol=1e-6, rtol=1e-6,
                           what=f"p after step {step}: ")  # fmt: skip
        if not verdict.ok:
            return verdict
        if not np.allclose(new_b, b_right):
            return Verdict(
                False,
                f"step {step}: the velocity returned is not mu * b + g",
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
    "6.1", "SGD with momentum, by hand", _grade_momentum,
    wrong=[
        Wrong("no momentum at all", _plain_sgd, "keep a velocity"),
        Wrong("the step uses the old velocity", _old_velocity, "new velocity"),
        Wrong("a (1 - mu) dampening factor", _dampened, "no (1 - mu) factor"),
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


def _grade_updates(fn) -> Verdict:
    from tinygrad_edu.symbolic import training as st  # noqa: PLC0415

    got = _train(fn)
    if not isinstance(got, np.ndarray):
        return Verdict(
            False,
            f"returned a {type(got).__name__}",
            "return a list of updates: [st.Update(p, new value)]",
        )
    start = _train(lambda sc, p, g, lr: [st.Update(p, p)], steps=1)
    mistakes = [
        (_train(lambda sc, p, g, lr: [st.Update(p, p + lr * g)]), "the loss went up: step "
         "against the gradient, not along it (the sign)"),
        (_train(lambda sc, p, g, lr: [st.Update(p, p - g)]), "the steps are too large: scale "
         "the gradient by the learning rate lr"),
        (start, "W and b never changed: the new value you give p must differ from p"),
        (_train(lambda sc, p, g, lr: [st.Update(p, p - lr * lr * g)]), "the steps are too "
         "small: the learning rate is applied once"),
    ]  # fmt: skip
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


def _update(sign=-1.0, scaled=True):
    from tinygrad_edu.symbolic import training as st  # noqa: PLC0415

    def answer(scope, p, g, lr):
        return [st.Update(p, p + sign * lr * g if scaled else p + sign * g)]

    return answer


sgd_update_nodes = Exercise(
    "6.2", "the symbolic update node", _grade_updates,
    wrong=[
        Wrong("up the gradient", _update(+1.0), "against the gradient"),
        Wrong("without the learning rate", _update(scaled=False), "learning rate"),
        Wrong("a bare node instead of a list of updates", lambda scope, p, g, lr: p - lr * g,
              "list of updates"),
        Wrong("p kept as it is", _update(scaled=False, sign=0.0), "never changed"),
    ],
)  # fmt: skip

EXERCISES = (momentum_step, sgd_update_nodes)
