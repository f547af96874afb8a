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


def test_bigram_language_model_lecture_loop():
    """The bigram model of the character-level lectures, as they write it (device probe,
    ``@torch.no_grad()`` evaluation, AdamW, ``zero_grad(set_to_none=True)``, gradient
    clipping); sampling needs ``multinomial``, an op of its own, so this stops at training."""
    F = torch.nn.functional
    batch_size, block_size, max_iters, eval_iters = 16, 8, 150, 5
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(1337)
    text = "First Citizen: Before we proceed any further, hear me speak. All: Speak, speak. " * 20
    chars = sorted(set(text))
    stoi = {ch: i for i, ch in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    n = int(0.9 * len(data))
    train_data, val_data = data[:n], data[n:]

    def get_batch(split):
        data = train_data if split == "train" else val_data
        ix = torch.randint(len(data) - block_size, (batch_size,))
        x = torch.stack([data[i:i + block_size] for i in ix])
        y = torch.stack([data[i + 1:i + block_size + 1] for i in ix])
        return x.to(device), y.to(device)

    class BigramLanguageModel(nn.Module):
        def __init__(self, vocab_size):
            super().__init__()
            self.token_embedding_table = nn.Embedding(vocab_size, vocab_size)

        def forward(self, idx, targets=None):
            logits = self.token_embedding_table(idx)
            B, T, C = logits.shape
            loss = F.cross_entropy(logits.view(B * T, C), targets.view(B * T))
            return logits, loss

    @torch.no_grad()
    def estimate_loss():
        out = {}
        model.eval()
        for split in ["train", "val"]:
            losses = torch.zeros(eval_iters)
            for k in range(eval_iters):
                X, Y = get_batch(split)
                _, loss = model(X, Y)
                losses[k] = loss.item()
            out[split] = losses.mean().item()
        model.train()
        return out

    model = BigramLanguageModel(len(chars)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    before = estimate_loss()
    for _ in range(max_iters):
        xb, yb = get_batch("train")
        _, loss = model(xb, yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
    after = estimate_loss()
    assert after["train"] < before["train"] - 1.0 and after["val"] < before["val"] - 1.0
