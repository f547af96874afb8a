"""PyTorch's beginner tutorials, as PyTorch writes them (``import torch``, ``from torch import
nn``), run on this library: each source is executed with ``torch`` imported as
``tinygrad_edu`` (``torch.nn`` as ``tinygrad_edu.nn`` ...), and again on PyTorch itself, and
the two must agree on what the tutorial shows (values, shapes, the loss falling).

What differs from the published tutorials: the data (small synthetic sets in place of
FashionMNIST and MNIST downloads, so no network is needed) and, in the longest loops, the
number of steps (so the file runs in seconds). Nothing else is changed: no name is spelled
differently for this library.

The tutorials: "Tensors", "A Gentle Introduction to torch.autograd" and "Automatic
Differentiation with torch.autograd", "Build the Neural Network", "Optimizing Model
Parameters", "What is torch.nn really?" (nn_tutorial) and "Learning PyTorch with Examples"
(the polynomial fitted with numpy, tensors, autograd, a custom autograd.Function, nn, optim,
a custom nn.Module and a dynamic graph).
"""

from __future__ import annotations

import builtins
import contextlib
import io
import re
import textwrap

import numpy as np
import pytest


def _importer(package: str):
    """``__import__`` that reads ``torch`` (and ``torch.x.y``) as ``package``."""

    def imp(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and (name == "torch" or name.startswith("torch.")):
            name = package + name[len("torch"):]
        return builtins.__import__(name, globals, locals, fromlist, level)

    return imp


def run_tutorial(source: str, package: str = "tinygrad_edu", **data) -> tuple[dict, str]:
    """Run ``source`` with ``torch`` meaning ``package``; the names it defined and what it
    printed. ``data`` are names given to the script (the synthetic data sets)."""
    scope = {"__builtins__": {**vars(builtins), "__import__": _importer(package)},
             "__name__": "__tutorial__", **data}  # fmt: skip
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(textwrap.dedent(source), "<tutorial>", "exec"), scope)
    return scope, out.getvalue()


def documented(text: str) -> str:
    """PyTorch's printout with the two printing differences docs/coming-from-pytorch.md
    documents undone: a shape prints as a tuple, a dtype without ``torch.``."""
    text = re.sub(r"torch\.Size\(\[(\d+)\]\)", r"(\1,)", text)
    text = re.sub(r"torch\.Size\(\[([\d, ]*)\]\)", r"(\1)", text)
    return re.sub(r"torch\.(float|int|bool|uint)", r"\1", text)


BOTH = pytest.mark.parametrize("package", ["tinygrad_edu", "torch"])

TENSORS = """
import torch
import numpy as np

data = [[1, 2],[3, 4]]
x_data = torch.tensor(data)
np_array = np.array(data)
x_np = torch.from_numpy(np_array)
x_ones = torch.ones_like(x_data) # retains the properties of x_data
print(f"Ones Tensor: \\n {x_ones} \\n")
x_rand = torch.rand_like(x_data, dtype=torch.float) # overrides the datatype of x_data
print(f"Random Tensor: \\n {x_rand} \\n")
shape = (2,3,)
rand_tensor = torch.rand(shape)
ones_tensor = torch.ones(shape)
zeros_tensor = torch.zeros(shape)
print(f"Random Tensor: \\n {rand_tensor} \\n")
print(f"Ones Tensor: \\n {ones_tensor} \\n")
print(f"Zeros Tensor: \\n {zeros_tensor}")
tensor = torch.rand(3,4)
print(f"Shape of tensor: {tensor.shape}")
print(f"Datatype of tensor: {tensor.dtype}")
print(f"Device tensor is stored on: {tensor.device}")
# We move our tensor to the current accelerator if available
if torch.accelerator.is_available():
    tensor = tensor.to(torch.accelerator.current_accelerator())
tensor = torch.ones(4, 4)
print(f"First row: {tensor[0]}")
print(f"First column: {tensor[:, 0]}")
print(f"Last column: {tensor[..., -1]}")
tensor[:,1] = 0
print(tensor)
t1 = torch.cat([tensor, tensor, tensor], dim=1)
print(t1)
# This computes the matrix multiplication between two tensors. y1, y2, y3 will have the same value
y1 = tensor @ tensor.T
y2 = tensor.matmul(tensor.T)
y3 = torch.rand_like(y1)
torch.matmul(tensor, tensor.T, out=y3)
# This computes the element-wise product. z1, z2, z3 will have the same value
z1 = tensor * tensor
z2 = tensor.mul(tensor)
z3 = torch.rand_like(tensor)
torch.mul(tensor, tensor, out=z3)
agg = tensor.sum()
agg_item = agg.item()
print(agg_item, type(agg_item))
print(f"{tensor} \\n")
tensor.add_(5)
print(tensor)
t = torch.ones(5)
print(f"t: {t}")
n = t.numpy()
print(f"n: {n}")
t.add_(1)
print(f"t: {t}")
print(f"n: {n}")
n = np.ones(5)
t = torch.from_numpy(n)
np.add(n, 1, out=n)
print(f"t: {t}")
print(f"n: {n}")
"""


@BOTH
def test_tensors(package):
    g, printed = run_tutorial(TENSORS, package)
    for name in ("y1", "y2", "y3"):
        np.testing.assert_array_equal(np.asarray(g[name]), np.full((4, 4), 3.0))
    np.testing.assert_array_equal(np.asarray(g["z3"]), np.asarray(g["z1"]))
    assert g["agg_item"] == 12.0 and isinstance(g["agg_item"], float)
    assert "n: [2. 2. 2. 2. 2.]" in printed  # .numpy() shares memory with the tensor
    printed = documented(printed)
    assert "t: tensor([2., 2., 2., 2., 2.], dtype=float64)" in printed  # from_numpy too
    assert tuple(g["x_rand"].shape) == (2, 2) and documented(str(g["x_rand"].dtype)) == "float32"
    assert "Shape of tensor: (3, 4)" in printed
    assert "Device tensor is stored on: cpu" in printed


def test_tensors_prints_what_pytorch_prints():
    """Every line that shows no random number is printed the same."""
    ours = run_tutorial(TENSORS)[1].splitlines()
    theirs = documented(run_tutorial(TENSORS, "torch")[1]).splitlines()
    assert len(ours) == len(theirs)
    random_lines = {i for i, t in enumerate(theirs) if "Random" in t}
    random_lines |= {i + k for i in random_lines for k in (1, 2, 3)}
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if i not in random_lines:
            assert a == b, f"line {i}: {a!r} != {b!r}"


AUTOGRAD = """
import torch

x = torch.ones(5)  # input tensor
y = torch.zeros(3)  # expected output
w = torch.randn(5, 3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
z = torch.matmul(x, w)+b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
print(f"Gradient function for z = {z.grad_fn}")
print(f"Gradient function for loss = {loss.grad_fn}")
loss.backward()
print(w.grad)
print(b.grad)
z = torch.matmul(x, w)+b
print(z.requires_grad)
with torch.no_grad():
    z = torch.matmul(x, w)+b
print(z.requires_grad)
z = torch.matmul(x, w)+b
z_det = z.detach()
print(z_det.requires_grad)
inp = torch.eye(4, 5, requires_grad=True)
out = (inp+1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"First call\\n{inp.grad}")
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\\nSecond call\\n{inp.grad}")
inp.grad.zero_()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\\nCall after zeroing gradients\\n{inp.grad}")

# "A Gentle Introduction to torch.autograd"
a = torch.tensor([2., 3.], requires_grad=True)
b = torch.tensor([6., 4.], requires_grad=True)
Q = 3*a**3 - b**2
external_grad = torch.tensor([1., 1.])
Q.backward(gradient=external_grad)
# check if collected gradients are correct
print(9*a**2 == a.grad)
print(-2*b == b.grad)
x = torch.rand(5, 5)
y = torch.rand(5, 5)
z = torch.rand((5, 5), requires_grad=True)
a = x + y
print(f"Does `a` require gradients?: {a.requires_grad}")
b = x + z
print(f"Does `b` require gradients?: {b.requires_grad}")
"""


def test_autograd_prints_what_pytorch_prints():
    """Apart from the random weights' gradients and the node addresses, the same text."""
    ours, theirs = run_tutorial(AUTOGRAD)[1], documented(run_tutorial(AUTOGRAD, "torch")[1])
    start = "True\nFalse\nFalse\nFirst call"
    assert ours[ours.index(start):] == theirs[theirs.index(start):]
    assert "Gradient function for loss = <BinaryCrossEntropyWithLogitsBackward0" in ours


BUILD_MODEL = """
import os
import torch
from torch import nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
""".replace("from torchvision import datasets, transforms\n", "") + """
device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
print(f"Using {device} device")

class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28*28, 512),
            nn.ReLU(),
            nn.Linear(512, 512),
            nn.ReLU(),
            nn.Linear(512, 10),
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits

model = NeuralNetwork().to(device)
print(model)
X = torch.rand(1, 28, 28, device=device)
logits = model(X)
pred_probab = nn.Softmax(dim=1)(logits)
y_pred = pred_probab.argmax(1)
print(f"Predicted class: {y_pred}")
input_image = torch.rand(3,28,28)
print(input_image.size())
flatten = nn.Flatten()
flat_image = flatten(input_image)
print(flat_image.size())
layer1 = nn.Linear(in_features=28*28, out_features=20)
hidden1 = layer1(flat_image)
print(hidden1.size())
print(f"Before ReLU: {hidden1}\\n\\n")
hidden1 = nn.ReLU()(hidden1)
print(f"After ReLU: {hidden1}")
seq_modules = nn.Sequential(
    flatten,
    layer1,
    nn.ReLU(),
    nn.Linear(20, 10)
)
input_image = torch.rand(3,28,28)
logits = seq_modules(input_image)
softmax = nn.Softmax(dim=1)
pred_probab = softmax(logits)
print(f"Model structure: {model}\\n\\n")
for name, param in model.named_parameters():
    print(f"Layer: {name} | Size: {param.size()} | Values : {param[:2]} \\n")
"""


def test_build_the_neural_network():
    ours, printed = run_tutorial(BUILD_MODEL)
    theirs, their_print = run_tutorial(BUILD_MODEL, "torch")
    their_print = documented(their_print)
    assert printed.splitlines()[:10] == their_print.splitlines()[:10]  # device, the model
    assert "(3, 784)" in printed and "(3, 20)" in printed
    np.testing.assert_allclose(np.asarray(ours["pred_probab"].detach()).sum(1), 1.0, rtol=1e-6)
    sizes = [line.split("|")[:2] for line in printed.splitlines() if line.startswith("Layer")]
    assert sizes == [line.split("|")[:2] for line in their_print.splitlines()
                     if line.startswith("Layer")]  # fmt: skip


def _images(n, seed, classes=10):
    """FashionMNIST's shapes: (n, 1, 28, 28) float images in [0, 1] whose class is which
    horizontal band is brighter, and (n,) int64 labels."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    x = rng.random((n, 1, 28, 28)).astype(np.float32) * 0.5
    for i, c in enumerate(y):
        x[i, 0, 2 * c + 4: 2 * c + 6, :] += 0.5
    return x, y


OPTIMIZATION = """
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

training_data = TensorDataset(torch.tensor(train_x), torch.tensor(train_y))
test_data = TensorDataset(torch.tensor(test_x), torch.tensor(test_y))
train_dataloader = DataLoader(training_data, batch_size=64)
test_dataloader = DataLoader(test_data, batch_size=64)

class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28*28, 512),
            nn.ReLU(),
            nn.Linear(512, 512),
            nn.ReLU(),
            nn.Linear(512, 10),
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits

model = NeuralNetwork()
learning_rate = 1e-3
batch_size = 64
epochs = 5
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)

def train_loop(dataloader, model, loss_fn, optimizer):
    size = len(dataloader.dataset)
    # Set the model to training mode - important for batch normalization and dropout layers
    # Unnecessary in this situation but added for best practices
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        # Compute prediction and loss
        pred = model(X)
        loss = loss_fn(pred, y)

        # Backpropagation
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

        if batch % 100 == 0:
            loss, current = loss.item(), batch * batch_size + len(X)
            print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")


def test_loop(dataloader, model, loss_fn):
    # Set the model to evaluation mode - important for batch normalization and dropout layers
    # Unnecessary in this situation but added for best practices
    model.eval()
    size = len(dataloader.dataset)
    num_batches = len(dataloader)
    test_loss, correct = 0, 0

    # Evaluating the model with torch.no_grad() ensures that no gradients are computed during
    # test mode also serves to reduce unnecessary gradient computations and memory usage for
    # tensors with requires_grad=True
    with torch.no_grad():
        for X, y in dataloader:
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()

    test_loss /= num_batches
    correct /= size
    print(f"Test Error: \\n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \\n")
    return test_loss, correct

learning_rate = 0.1  # FashionMNIST's 1e-3 learns this small set too slowly
optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)
results = []
epochs = 3
for t in range(epochs):
    print(f"Epoch {t+1}\\n-------------------------------")
    train_loop(train_dataloader, model, loss_fn, optimizer)
    results.append(test_loop(test_dataloader, model, loss_fn))
print("Done!")
"""


@BOTH
def test_optimizing_model_parameters(package):
    train_x, train_y = _images(640, 0)
    test_x, test_y = _images(256, 1)
    g, printed = run_tutorial(OPTIMIZATION, package, train_x=train_x, train_y=train_y,
                              test_x=test_x, test_y=test_y)  # fmt: skip
    losses = [r[0] for r in g["results"]]
    assert losses[-1] < losses[0] < 2.31 and g["results"][-1][1] > 0.5, printed
    assert "loss:" in printed and "[   64/  640]" in printed and printed.endswith("Done!\n")
