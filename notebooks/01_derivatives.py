# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 1 — Derivatives, the chain rule and finite differences
#
# Everything an autograd library does rests on three ideas, and this lesson covers them:
#
# 1. **the derivative** — how much a function's output moves when its input moves a little;
# 2. **the chain rule** — the derivative of a composition is the product of the derivatives
#    of its pieces, which is what makes *automatic* differentiation possible;
# 3. **finite differences** — a numerical estimate of a derivative, slow but simple, which we
#    use to *check* every derivative the library computes.
#
# At the end we meet `tg.tensor(..., requires_grad=True)` and `.backward()`, and watch them
# agree with a derivation done by hand.
#
# Exercises are marked **Exercise**. Write your code between the lines of the exercise cell,
# then run the cell below it: it says **PASS** when your answer is right, and **FAIL** with
# what was expected and a hint otherwise. Until you write it, it says **NOT SOLVED YET**, and
# the cells that need your function use a reference version instead (they say so), so the
# lesson always runs from top to bottom.

# %%
import matplotlib.pyplot as plt
import numpy as np

import tinygrad_edu as tg
from tinygrad_course.lessons import check_gradient, check_true, summary
from tinygrad_course.lessons import lesson01 as ex


# %% [markdown]
# ## 1. The derivative
#
# The derivative of $f$ at $x$ is the slope of the tangent line there:
#
# $$f'(x) = \lim_{\epsilon \to 0} \frac{f(x + \epsilon) - f(x)}{\epsilon}.$$
#
# For $f(x) = x^2$: $\frac{(x+\epsilon)^2 - x^2}{\epsilon} = 2x + \epsilon \to 2x$.
# Let us watch the quotient approach $2x = 6$ at $x = 3$ as $\epsilon$ shrinks.

# %%
def f(x):
    return x**2


x = 3.0
for eps in [1.0, 0.1, 0.01, 0.001]:
    print(f"eps={eps:<6} slope={(f(x + eps) - f(x)) / eps:.6f}")


# %% [markdown]
# ## 2. Finite differences: forward and central
#
# Stopping the limit at a small but finite $\epsilon$ gives the **forward difference**
#
# $$f'(x) \approx \frac{f(x + \epsilon) - f(x)}{\epsilon}, \qquad
# \text{error} = \tfrac{1}{2} f''(x)\,\epsilon + O(\epsilon^2).$$
#
# Stepping both ways gives the **central difference**, whose $\epsilon$ terms cancel
# (expand both sides in a Taylor series to see it):
#
# $$f'(x) \approx \frac{f(x + \epsilon) - f(x - \epsilon)}{2\epsilon}, \qquad
# \text{error} = \tfrac{1}{6} f'''(x)\,\epsilon^2 + O(\epsilon^4).$$
#
# ### Exercise 1.1 — the central difference
#
# Write `central_difference(f, x, eps)`. It should work when `x` is a number or a numpy array
# (then it differentiates elementwise). The check tries it on $x^3$ at $x = 2$ with
# $\epsilon = 10^{-3}$ (the answer is $12$ to about $10^{-6}$) and on $\sin$ at five points.

# %%
def forward_difference(f, x, eps=1e-6):
    return (f(x + eps) - f(x)) / eps


def central_difference(f, x, eps=1e-6):
    # BEGIN SOLUTION
    return (f(x + eps) - f(x - eps)) / (2 * eps)
    # END SOLUTION


# %%
ex.central_difference.check(central_difference)

# %% [markdown]
# ## 3. How small should $\epsilon$ be?
#
# Shrinking $\epsilon$ lowers the *truncation* error ($\propto \epsilon$ or $\epsilon^2$), but
# the computer stores numbers with a relative precision $u$ (about $10^{-16}$ in float64,
# $10^{-7}$ in float32). Subtracting two nearly equal values $f(x \pm \epsilon)$ loses digits,
# a *rounding* error of about $u\,|f(x)| / \epsilon$ that **grows** as $\epsilon$ shrinks.
# The total error is smallest where the two meet:
#
# | | truncation | rounding | best $\epsilon$ (float64) | best $\epsilon$ (float32) |
# |---|---|---|---|---|
# | forward | $\epsilon$ | $u/\epsilon$ | $\sqrt{u} \approx 10^{-8}$ | $\approx 3 \times 10^{-4}$ |
# | central | $\epsilon^2$ | $u/\epsilon$ | $u^{1/3} \approx 6 \times 10^{-6}$ | $\approx 5 \times 10^{-3}$ |
#
# The plot measures it for $f(x) = \sin x$ at $x = 1$, in both precisions.

# %%
central = ex.central_difference.use(central_difference)
eps_values = np.logspace(-14, 0, 57)
x0 = 1.0
exact = np.cos(x0)

fig, ax = plt.subplots(figsize=(7, 4.2))
for dtype, style in [(np.float64, "-"), (np.float32, "--")]:
    x = dtype(x0)
    for name, rule, color in [("forward", forward_difference, "C0"), ("central", central, "C3")]:
        errors = [abs(float(rule(np.sin, x, dtype(e))) - exact) for e in eps_values]
        errors = np.maximum(errors, 1e-17)  # an exact hit would vanish on a log axis
        ax.loglog(eps_values, errors, style, color=color, label=f"{name}, {np.dtype(dtype).name}")
ax.set_xlabel("step eps")
ax.set_ylabel("|estimate - cos(1)|")
ax.set_title("Finite-difference error of d/dx sin(x) at x = 1")
ax.grid(True, which="major", alpha=0.3)
ax.legend()
plt.show()

# %% [markdown]
# Read the plot from right to left. At large $\epsilon$ the lines fall with slope 1 (forward)
# and slope 2 (central): truncation error. Then they turn around and *rise* with slope $-1$:
# rounding error. float32 turns around much earlier, and its best accuracy is only about
# $10^{-4}$ (forward) to $10^{-5}$ (central). Below $\epsilon \approx 10^{-7}$, float32 cannot
# even tell $x + \epsilon$ from $x$: the estimate is 0 and the error is $\cos 1 \approx 0.54$.
#
# Where exactly is the bottom of the float64 central-difference curve? Read off the numbers:

# %%
errors64 = np.array([abs(float(central(np.sin, x0, e)) - exact) for e in eps_values])
best = eps_values[int(np.argmin(errors64))]
print(f"smallest error at eps = {best:.1e} (u^(1/3) = {np.finfo(np.float64).eps ** (1 / 3):.1e})")
for e in (1e-4, 1e-5, 1e-6, 1e-7, 1e-8):
    print(f"eps = {e:.0e}: error {abs(float(central(np.sin, x0, e)) - exact):.1e}")
check_true("the best float64 step lies between 1e-6 and 1e-5", 1e-6 <= best <= 1e-5)

# %% [markdown]
# The bottom is a few times $10^{-6}$, as $u^{1/3}$ predicts, and it is flat: anywhere from
# $10^{-6}$ to $10^{-5}$ the error stays near $10^{-11}$, while a step ten times larger
# (truncation) or smaller (rounding) costs one to two digits.
#
# Two lessons for the rest of the course:
#
# * **gradient checks run in float64 with central differences and $\epsilon$ between
#   $10^{-6}$ and $10^{-5}$** (the library's `check_gradient` uses $\epsilon = 10^{-6}$, in that
#   range), and
# * a finite difference costs two evaluations of $f$ **per input element** — fine for a test,
#   hopeless for training a network with a million weights. We need something better.

# %% [markdown]
# ## 4. The chain rule
#
# If $y = f(u)$ and $u = g(x)$, then
#
# $$\frac{dy}{dx} = \frac{dy}{du} \cdot \frac{du}{dx} = f'(g(x))\, g'(x).$$
#
# A long composition $y = f_3(f_2(f_1(x)))$ is a product of local derivatives, one per step:
# $\frac{dy}{dx} = f_3'(u_2)\, f_2'(u_1)\, f_1'(x)$. Each factor only needs the value that went
# into its own step. That is the whole idea of reverse-mode automatic differentiation: remember
# the intermediate values on the way forward, then multiply the local derivatives on the way
# back, starting from $\frac{dy}{dy} = 1$.
#
# Let us do it by hand for $y = \tanh(x^2)$ at $x = 0.8$:

# %%
x = 0.8
u = x**2           # forward, step 1
y = np.tanh(u)     # forward, step 2

dy_dy = 1.0
dy_du = dy_dy * (1 - np.tanh(u) ** 2)   # tanh'(u) = 1 - tanh(u)^2
dy_dx = dy_du * 2 * x                   # (x^2)' = 2x
print(f"by hand:        {dy_dx:.10f}")
print(f"central diff.:  {central(lambda t: np.tanh(t**2), x):.10f}")


# %% [markdown]
# ### Exercise 1.2 — a derivative by the chain rule
#
# Let $h(x) = e^{-x^2/2} \cdot \tanh(x)$. Work out $h'(x)$ with the product and chain rules and
# write it as `dh_dx(x)` (for numpy arrays `x`). The check compares it with central
# differences at several points.

# %%
def h(x):
    return np.exp(-(x**2) / 2) * np.tanh(x)


def dh_dx(x):
    # BEGIN SOLUTION
    gauss = np.exp(-(x**2) / 2)
    return -x * gauss * np.tanh(x) + gauss * (1 - np.tanh(x) ** 2)
    # END SOLUTION


# %%
ex.dh_dx.check(dh_dx)

# %% [markdown]
# ## 5. A first look at `tinygrad_edu`
#
# A `tg.tensor` holds an array. Created with `requires_grad=True`, it also *records* every
# operation applied to it, building a graph of backward steps as a side effect of computing.
# `y.backward()` then walks that graph from `y` back to the inputs, applying the chain rule
# exactly as we did by hand, and leaves $\partial y / \partial x$ in `x.grad`.
#
# Same function as before, $y = \tanh(x^2)$ at $x = 0.8$:

# %%
x = tg.tensor(0.8, requires_grad=True, dtype="float64")
y = (x**2).tanh()
print(y)
y.backward()
print("autograd:", x.grad.item())
print("by hand: ", dy_dx)

# %% [markdown]
# The printout shows `grad_fn=<TanhBackward0>`: the backward step that produced `y`. Each
# backward step points at the next ones through `next_functions`, all the way to
# `AccumulateGrad`, the step that adds into the leaf's `.grad`. That chain *is* the chain rule,
# written down as data:

# %%
node = y.grad_fn
while node is not None:
    print(node.name())
    node = node.next_functions[0][0] if node.next_functions else None

# %% [markdown]
# Tensors of any shape work the same way. For $L = \sum_i x_i^2 w_i$ the gradients are
# $\partial L/\partial x_i = 2 x_i w_i$ and $\partial L/\partial w_i = x_i^2$:

# %%
xv = np.array([1.0, -2.0, 3.0])
wv = np.array([0.5, 0.25, -1.0])
x = tg.tensor(xv, requires_grad=True)
w = tg.tensor(wv, requires_grad=True)
L = (x**2 * w).sum()
L.backward()
print("x.grad =", x.grad, "  by hand:", 2 * xv * wv)
print("w.grad =", w.grad, "  by hand:", xv**2)

# %% [markdown]
# ### Exercise 1.3 — one neuron, by hand and by autograd
#
# A neuron with weight $w$ and bias $b$ maps $x$ to $y = \sigma(w x + b)$, with
# $\sigma(z) = 1/(1+e^{-z})$ and $\sigma'(z) = \sigma(z)\,(1 - \sigma(z))$. Its squared error
# against a target $t$ is $L = (y - t)^2$.
#
# Derive $\partial L/\partial w$ and $\partial L/\partial b$ by the chain rule and write
# `neuron_gradients(x, w, b, t)`, which returns the pair $(\partial L/\partial w,
# \partial L/\partial b)$ computed **with numpy only**. The check compares them with what
# `backward()` computes for $x = 1.5$, $w = -0.4$, $b = 0.2$, $t = 1$.

# %%
def neuron_gradients(x, w, b, t):
    # BEGIN SOLUTION
    z = w * x + b
    s = 1 / (1 + np.exp(-z))
    dL_dy = 2 * (s - t)
    dy_dz = s * (1 - s)
    return dL_dy * dy_dz * x, dL_dy * dy_dz
    # END SOLUTION


# %%
ex.neuron_gradients.check(neuron_gradients)

# %% [markdown]
# `check_gradient` runs the same kind of comparison for any function built from tensor ops,
# against central differences (in float64):

# %%
x_val, w_val, b_val, t_val = 1.5, -0.4, 0.2, 1.0
check_gradient(lambda w, b: ((w * x_val + b).sigmoid() - t_val) ** 2, [w_val, b_val],
               name="the neuron's loss")
summary(ex);

# %% [markdown]
# ## Summary
#
# * A derivative is a local slope; the **chain rule** turns the derivative of a long
#   computation into a product of simple local derivatives.
# * **Finite differences** estimate derivatives with two function calls per input; use central
#   differences in float64 with $\epsilon$ between $10^{-6}$ and $10^{-5}$ (the bottom of the
#   error curve measured above), and only to *check*.
# * `tinygrad_edu` records a graph of backward steps while it computes, and `backward()` applies
#   the chain rule over it. The next lessons open that graph up — in two different forms.
