"""PyTorch's "Optimizing Model Parameters" tutorial, its code unchanged but for a synthetic
dataset in place of FashionMNIST (no downloads) and fewer epochs, written with
``import tinygrad_edu as torch``: the device probe, ``utils.data``, ``AdamW``, a schedule,
``torch.save``/``torch.load(weights_only=True)``; the training loss falls."""

import tinygrad_edu as torch
from tinygrad_edu import nn
from tinygrad_edu.utils.data import DataLoader, TensorDataset


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28 * 28, 64),
            nn.ReLU(),
            nn.Linear(64, 64),
            nn.ReLU(),
            nn.Linear(64, 10),
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits


def train_loop(dataloader, model, loss_fn, optimizer, batch_size, log):
    size = len(dataloader.dataset)
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        pred = model(X)
        loss = loss_fn(pred, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        loss, current = loss.item(), batch * batch_size + len(X)
        log.append(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")


def test_loop(dataloader, model, loss_fn):
    model.eval()
    size = len(dataloader.dataset)
    num_batches = len(dataloader)
    test_loss, correct = 0, 0
    with torch.no_grad():
        for X, y in dataloader:
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()
    test_loss /= num_batches
    correct /= size
    return test_loss, correct


test_loop.__test__ = False  # the tutorial's name, not a test


def test_optimization_tutorial_runs_and_learns(tmp_path):
    torch.manual_seed(0)
    device = (torch.accelerator.current_accelerator().type if torch.accelerator.is_available()
              else "cpu")  # fmt: skip
    X = torch.randn(320, 1, 28, 28)
    y = (X[:, 0, :4, :4].sum(dim=(1, 2)) > 0).long() * 3  # a learnable rule: classes 0 and 3
    training_data = TensorDataset(X[:256], y[:256])
    test_data = TensorDataset(X[256:], y[256:])
    batch_size = 64
    train_dataloader = DataLoader(training_data, batch_size=batch_size, shuffle=True)
    test_dataloader = DataLoader(test_data, batch_size=batch_size)
    model = NeuralNetwork().to(device)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    log, first = [], test_loop(test_dataloader, model, loss_fn)
    for _ in range(4):
        train_loop(train_dataloader, model, loss_fn, optimizer, batch_size, log)
        scheduler.step()
    last = test_loop(test_dataloader, model, loss_fn)
    losses = [float(line.split()[1]) for line in log]
    assert len(losses) == 16 and losses[-1] < 0.8 * losses[0]
    assert last[0] < first[0] and scheduler.get_last_lr() == [2.5e-4]
    path = str(tmp_path / "model_weights.pth")
    torch.save(model.state_dict(), path)
    model2 = NeuralNetwork()
    model2.load_state_dict(torch.load(path, weights_only=True, map_location="cpu"))
    model2.eval()
    assert test_loop(test_dataloader, model2, loss_fn) == last
