r"""L-BFGS: a quasi-Newton method that builds an estimate of the inverse Hessian from the last
``history_size`` steps, with PyTorch's algorithm step for step (``torch.optim.LBFGS``).

All parameters are seen as one flat vector $x$ with gradient $g$. After each step the pair
$s = x_{k+1} - x_k$, $y = g_{k+1} - g_k$ is remembered (when $y^\top s > 10^{-10}$), and the
next direction $d = -H g$ comes from the *two-loop recursion* over the remembered pairs,
starting from $H_0 = \frac{y^\top s}{y^\top y} I$. The step length is ``lr`` (the very first
step is ``min(1, 1/|g|_1) * lr``), or, with ``line_search_fn="strong_wolfe"``, one found by a
line search that satisfies the strong Wolfe conditions (cubic interpolation and zoom).

``step(closure)`` needs a closure that clears the gradients, computes the loss, calls
``backward()`` and returns the loss: L-BFGS evaluates the function several times per step.

>>> import tinygrad_edu as tg
>>> x = tg.nn.Parameter([1.5, -0.5])
>>> opt = tg.optim.LBFGS([x], line_search_fn="strong_wolfe")
>>> def closure():
...     opt.zero_grad()
...     loss = ((x - tg.tensor([3.0, 2.0])) ** 2).sum()
...     loss.backward()
...     return loss
>>> _ = opt.step(closure)
>>> [round(v, 4) for v in x.tolist()]
[3.0, 2.0]
"""

from __future__ import annotations

import math

from .. import backend
from ..eager.grad_mode import enable_grad, no_grad
from .optimizer import Optimizer

__all__ = ["LBFGS"]


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through ``(x1, f1)`` and ``(x2, f2)`` with slopes ``g1`` and
    ``g2``, clamped to ``bounds`` (default: between ``x1`` and ``x2``); the middle of the
    bounds when the cubic has no minimum."""
    if bounds is not None:
        lo, hi = bounds
    else:
        lo, hi = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square >= 0:
        d2 = math.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, lo), hi)
    return (lo + hi) / 2.0


def _dot(xp, a, b) -> float:
    return float(xp.sum(a * b))


def _strong_wolfe(xp, obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):  # fmt: skip
    """A step ``t`` along ``d`` meeting the strong Wolfe conditions: sufficient decrease
    ``f(t) <= f + c1 t gtd`` and a flat enough slope ``|g(t).d| <= -c2 gtd``. First a
    bracketing phase (steps grow by cubic extrapolation), then a zoom inside the bracket.
    Returns ``(f_new, g_new, t, evaluations)``."""
    d_norm = float(xp.max(xp.abs(d)))
    g = xp.asarray(g, copy=True)
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = _dot(xp, g_new, d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, xp.asarray(g_new, copy=True)], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, xp.asarray(g_new, copy=True)], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(min_step, max_step))  # fmt: skip
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, xp.asarray(g_new, copy=True), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = _dot(xp, g_new, d)
        ls_iter += 1
    if ls_iter == max_ls:  # the bracketing phase ran out of evaluations
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:  # the zoom phase
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1],
                               bracket_f[1], bracket_gtd[1])  # fmt: skip
        # NOTE [Zoom safeguard]: a point too close to an end of the bracket makes little
        # progress; the second time in a row, it is moved 10% of the bracket inwards
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = _dot(xp, g_new, d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = xp.asarray(g_new, copy=True), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = xp.asarray(g_new, copy=True), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


class LBFGS(Optimizer):
    """L-BFGS (see the module docstring), PyTorch's arguments and defaults.

    Args:
        params: the parameters (one group only).
        lr: the step length (default 1).
        max_iter: iterations per ``step`` (default 20).
        max_eval: function evaluations per ``step`` (default ``max_iter * 5 // 4``).
        tolerance_grad: stop when ``max |g| <= tolerance_grad`` (default 1e-7).
        tolerance_change: stop when the loss or the step changes less (default 1e-9).
        history_size: how many ``(s, y)`` pairs to remember (default 100).
        line_search_fn: ``None`` (fixed step) or ``"strong_wolfe"``.
    """

    def __init__(self, params, lr: float = 1, max_iter: int = 20, max_eval=None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9,
                 history_size: int = 100, line_search_fn=None):  # fmt: skip
        if not 0.0 <= lr:
            raise ValueError(f"LBFGS: invalid learning rate {lr}; it must be >= 0")
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(f"LBFGS: line_search_fn must be None or 'strong_wolfe', got "
                             f"{line_search_fn!r}")  # fmt: skip
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                        tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                        history_size=history_size, line_search_fn=line_search_fn)  # fmt: skip
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def add_param_group(self, group: dict) -> None:
        if self.param_groups:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        super().add_param_group(group)

    # -- the parameters as one flat vector ----------------------------------------------------
    def _xp(self):
        return backend.namespace_of(self._params[0]._data)

    def _gather_flat_grad(self):
        xp = self._xp()
        views = [xp.zeros((p.numel(),), dtype=p._data.dtype) if p.grad is None
                 else xp.reshape(p.grad._data, (-1,)) for p in self._params]  # fmt: skip
        return xp.concat(views) if hasattr(xp, "concat") else xp.concatenate(views)

    def _add_grad(self, step_size, update) -> None:
        offset = 0
        xp = self._xp()
        for p in self._params:
            n = p.numel()
            p._data[...] = p._data + step_size * xp.reshape(update[offset:offset + n], p.shape)
            p._counter[0] += 1  # see NOTE [Optimizer updates are in place]
            offset += n

    def _clone_param(self):
        return [self._xp().asarray(p._data, copy=True) for p in self._params]

    def _set_param(self, params_data) -> None:
        for p, data in zip(self._params, params_data):
            p._data[...] = data
            p._counter[0] += 1

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = _float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure):
        """One optimisation step: up to ``max_iter`` L-BFGS iterations; returns the loss that
        ``closure`` gave first."""
        if closure is None:
            raise RuntimeError("LBFGS.step: L-BFGS needs a closure that recomputes the loss "
                               "and its gradients: opt.step(closure)")  # fmt: skip
        self._opt_called = True
        with no_grad():
            return self._step(closure)

    def _step(self, closure):
        xp = self._xp()

        def evaluate():
            with enable_grad():
                return closure()

        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = evaluate()
        loss = _float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if _max_abs(xp, flat_grad) <= tolerance_grad:  # already optimal
            return orig_loss

        # what the search remembers between steps; written back to the state when it ends
        mem = {key: state.get(key) for key in _MEMORY}
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            self._new_direction(xp, state, mem, flat_grad, group["history_size"])
            mem["prev_flat_grad"] = xp.asarray(flat_grad, copy=True)
            mem["prev_loss"] = loss
            if state["n_iter"] == 1:
                mem["t"] = min(1.0, 1.0 / float(xp.sum(xp.abs(flat_grad)))) * lr
            else:
                mem["t"] = lr
            gtd = _dot(xp, flat_grad, mem["d"])
            if gtd > -tolerance_change:  # not a descent direction
                break

            loss, flat_grad, ls_func_evals, opt_cond = self._take_step(
                xp, evaluate, group, mem, loss, flat_grad, gtd,
                max_ls=max_eval - current_evals, last=n_iter == max_iter,
            )  # fmt: skip
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if _max_abs(xp, mem["d"] * mem["t"]) <= tolerance_change:
                break
            if abs(loss - mem["prev_loss"]) < tolerance_change:
                break

        state.update(mem)
        return orig_loss

    def _new_direction(self, xp, state: dict, mem: dict, flat_grad, history_size: int) -> None:
        """Set ``mem["d"]``: steepest descent at the first iteration, else ``-H g`` from the
        remembered ``(s, y)`` pairs, after remembering the last step's pair."""
        if state["n_iter"] == 1:  # the first direction: steepest descent
            mem.update(d=-flat_grad, old_dirs=[], old_stps=[], ro=[], H_diag=1)
            return
        old_dirs, old_stps, ro = mem["old_dirs"], mem["old_stps"], mem["ro"]
        y = flat_grad - mem["prev_flat_grad"]
        s = mem["d"] * mem["t"]
        ys = _dot(xp, y, s)
        if ys > 1e-10:  # remember the pair (skipped when curvature is not positive)
            if len(old_dirs) == history_size:
                old_dirs.pop(0)
                old_stps.pop(0)
                ro.pop(0)
            old_dirs.append(y)
            old_stps.append(s)
            ro.append(1.0 / ys)
            mem["H_diag"] = ys / _dot(xp, y, y)
        # NOTE [Two-loop recursion]: d = -H g without forming H: the first loop
        # walks the pairs newest to oldest, the second back again
        num_old = len(old_dirs)
        al = state.setdefault("al", [None] * history_size)
        q = -flat_grad
        for i in range(num_old - 1, -1, -1):
            al[i] = _dot(xp, old_stps[i], q) * ro[i]
            q = q - al[i] * old_dirs[i]
        mem["d"] = r = q * mem["H_diag"]
        for i in range(num_old):
            be_i = _dot(xp, old_dirs[i], r) * ro[i]
            r += (al[i] - be_i) * old_stps[i]

    def _take_step(self, xp, evaluate, group: dict, mem: dict, loss, flat_grad, gtd, max_ls,
                   last: bool):  # fmt: skip
        """Move the parameters along ``mem["d"]``: by a strong-Wolfe line search (which sets
        ``mem["t"]``), else by the fixed step ``mem["t"]``. Returns the new loss and gradient,
        the evaluations spent and whether the gradient is now below ``tolerance_grad``."""
        d, tolerance_grad = mem["d"], group["tolerance_grad"]
        if group["line_search_fn"] is not None:
            x_init = self._clone_param()

            def obj_func(x, t, d):
                return self._directional_evaluate(evaluate, x, t, d)

            loss, flat_grad, mem["t"], ls_func_evals = _strong_wolfe(
                xp, obj_func, x_init, mem["t"], d, loss, flat_grad, gtd, max_ls=max_ls
            )
            self._add_grad(mem["t"], d)
            return loss, flat_grad, ls_func_evals, _max_abs(xp, flat_grad) <= tolerance_grad
        self._add_grad(mem["t"], d)
        if last:  # the last iteration's loss is computed by the caller
            return loss, flat_grad, 0, False
        loss = _float(evaluate())
        flat_grad = self._gather_flat_grad()
        return loss, flat_grad, 1, _max_abs(xp, flat_grad) <= tolerance_grad


#: the state L-BFGS keeps from one ``step`` to the next (PyTorch's keys)
_MEMORY = ("d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad", "prev_loss")


def _max_abs(xp, a) -> float:
    return float(xp.max(xp.abs(a)))


def _float(loss) -> float:
    return float(loss.item()) if hasattr(loss, "item") else float(loss)
