"""The programs, where each comes from, and every change the runner makes before running it.

Each program's files live in ``sources/<name>/`` exactly as published (a comment header names
the repository, path, commit and licence). Before running, the runner replaces a few
constants or passes command-line arguments, listed here per program: only sizes (iterations,
batch size, widths, dataset) are changed, each replacement must match the source exactly as
many times as stated, and the same changed program runs on PyTorch and on this library.

For every program the runner copies PyTorch's initial parameters into ours and replays
PyTorch's random draws made by the program itself and its dropout masks (see ``child.py``).
``exact``: the two runs then compute the same numbers up to float rounding, and the first
losses agree to 1e-5. A program whose randomness the runner cannot reach (``nn.LSTM``'s own
dropout) would be compared statistically.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
SHAKESPEARE = os.path.join(HERE, "..", "..", "tinygrad_edu", "data", "shakespeare.txt")


@dataclass
class Program:
    name: str
    repo: str
    paths: list[str]  # the published paths, in the order the files are stored
    kind: str
    scripts: list[str]  # files run as ``__main__``, in order (the others are imported)
    subs: dict[str, list[tuple[str, str, int]]] = field(default_factory=dict)
    argv: dict[str, list[str]] = field(default_factory=dict)
    data: str = ""  # what the program reads in place of its download: see ``write_data``
    exact: bool = True
    final_rtol: float = 1e-3  # final loss, ours against PyTorch's (relative)
    fast: bool = False  # small enough for tests/test_real_programs.py
    # The program stops once a batch's loss falls below this: the step where the (noisy) curve
    # first crosses it moves with the last bits of rounding, so the two runs may differ in
    # length (and once PyTorch's run stopped, ours draws its batches from its own generator);
    # then both must end below it, and their first losses agree step for step (see compare).
    stop_below: float | None = None

    def source(self, file: str) -> str:
        """The stored source of ``file`` with this program's replacements made."""
        with open(os.path.join(HERE, "sources", self.name, file), encoding="utf-8") as f:
            text = f.read()
        for old, new, count in self.subs.get(file, []):
            found = len(re.findall(re.escape(old), text))
            if found != count:
                raise ValueError(f"{self.name}/{file}: {old!r} occurs {found} times, "
                                 f"expected {count}")  # fmt: skip
            text = text.replace(old, new)
        return text

    def changes(self) -> list[str]:
        """Every change, in words, for the report."""
        out = [f"`{f}`: `{o}` -> `{n}`" for f, subs in self.subs.items() for o, n, _ in subs]
        out += [f"`{f}` arguments: `{' '.join(a)}`" for f, a in self.argv.items()]
        if self.data:
            out.append(DATA[self.data])
        return out


DATA = {
    "input.txt": "`input.txt` (tiny Shakespeare, a download) is the bundled "
    "`tinygrad_edu/data/shakespeare.txt` (297 kB)",
    "names.txt": "`names.txt` is 2,000 distinct lower-case words of 3-10 letters from the bundled "
    "Shakespeare text",
    "mnist": "MNIST (a download) is the bundled 8x8 digits scaled to 28x28 (600 train, 200 test "
    "images; `fakes.py`)",
    "wikitext": "`data/wikitext-2/{train,valid,test}.txt` are 400, 60 and 60 lines of the bundled "
    "Shakespeare text",
    "lm": "`data/train.txt` (Penn Treebank) is the first 1,200 lines of the bundled Shakespeare "
    "text",
    "": "",
}


def write_data(kind: str, workdir: str) -> None:
    """Write the files a program reads into its working directory."""
    with open(SHAKESPEARE, encoding="utf-8") as f:
        text = f.read()
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if kind == "input.txt":
        with open(os.path.join(workdir, "input.txt"), "w", encoding="utf-8") as f:
            f.write(text)
    elif kind == "names.txt":
        words, seen = [], set()
        for w in re.findall(r"[a-z]+", text.lower()):
            if 3 <= len(w) <= 10 and w not in seen:
                seen.add(w)
                words.append(w)
        with open(os.path.join(workdir, "names.txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(words[:2000]) + "\n")
    elif kind == "wikitext":
        d = os.path.join(workdir, "data", "wikitext-2")
        os.makedirs(d)
        for name, part in (("train", lines[:400]), ("valid", lines[400:460]),
                           ("test", lines[460:520])):  # fmt: skip
            with open(os.path.join(d, f"{name}.txt"), "w", encoding="utf-8") as f:
                f.write("\n".join(part) + "\n")
    elif kind == "lm":
        os.makedirs(os.path.join(workdir, "data"))
        with open(os.path.join(workdir, "data", "train.txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines[:1200]) + "\n")


NG = "karpathy/ng-video-lecture"
EX = "pytorch/examples"
YJ = "yunjey/pytorch-tutorial"
T = "tutorials/"

PROGRAMS = [
    Program("bigram", NG, ["bigram.py"], "char-level bigram (Embedding, AdamW)", ["bigram.py"],
            subs={"bigram.py": [("max_iters = 3000", "max_iters = 300", 1),
                                ("eval_interval = 300", "eval_interval = 100", 1),
                                ("eval_iters = 200", "eval_iters = 10", 1),
                                ("max_new_tokens=500", "max_new_tokens=50", 1)]},
            data="input.txt", fast=True),
    Program("gpt", NG, ["gpt.py"], "char-level GPT (attention, LayerNorm, dropout)", ["gpt.py"],
            subs={"gpt.py": [("batch_size = 64", "batch_size = 16", 1),
                             ("block_size = 256", "block_size = 32", 1),
                             ("max_iters = 5000", "max_iters = 100", 1),
                             ("eval_interval = 500", "eval_interval = 50", 1),
                             ("eval_iters = 200", "eval_iters = 4", 1),
                             ("n_embd = 384", "n_embd = 64", 1),
                             ("n_head = 6", "n_head = 4", 1),
                             ("n_layer = 6", "n_layer = 2", 1),
                             ("max_new_tokens=500", "max_new_tokens=20", 1)]},
            data="input.txt", final_rtol=1e-2),
    Program("makemore", "karpathy/makemore", ["makemore.py"],
            "char-level transformer over words (makemore)", ["makemore.py"],
            argv={"makemore.py": ["--input-file", "names.txt", "--work-dir", "out",
                                  "--num-workers", "0", "--max-steps", "100", "--n-layer", "2",
                                  "--n-embd", "32", "--n-embd2", "32", "--batch-size", "16"]},
            data="names.txt"),
    Program("regression", EX, ["regression/main.py"], "polynomial regression (Linear, "
            "smooth_l1_loss, manual SGD)", ["main.py"], stop_below=1e-3, fast=True),
    Program("time_sequence", EX, ["time_sequence_prediction/generate_sine_wave.py",
                                  "time_sequence_prediction/train.py"],
            "sine waves (LSTMCell, float64, LBFGS)", ["generate_sine_wave.py", "train.py"],
            subs={"generate_sine_wave.py": [("L = 1000", "L = 100", 1), ("N = 100", "N = 12", 1)],
                  "train.py": [("future = 1000", "future = 100", 1),
                               # PyTorch >= 2.6 refuses to unpickle a numpy array by default
                               ("torch.load('traindata.pt')",
                                "torch.load('traindata.pt', weights_only=False)", 1)]},
            argv={"train.py": ["--steps", "2"]}, final_rtol=1e-2),
    Program("mnist", EX, ["mnist/main.py"], "MNIST CNN (Conv2d, dropout, Adadelta, StepLR)",
            ["main.py"],
            argv={"main.py": ["--batch-size", "32", "--test-batch-size", "100", "--epochs", "1",
                              "--log-interval", "5"]},
            data="mnist", final_rtol=3e-2),  # Adadelta at lr 1.0 magnifies rounding
    Program("vae", EX, ["vae/main.py"], "variational autoencoder (BCE + KL, Adam)", ["main.py"],
            argv={"main.py": ["--batch-size", "32", "--epochs", "2", "--log-interval", "5"]},
            data="mnist"),
    Program("word_language_model", EX, ["word_language_model/data.py",
                                        "word_language_model/model.py",
                                        "word_language_model/main.py"],
            "word-level LSTM language model (dropout, clipping, torch.save of the module)",
            ["main.py"],
            argv={"main.py": ["--emsize", "32", "--nhid", "32", "--epochs", "2", "--bptt", "10",
                              "--batch_size", "10", "--log-interval", "20"]},
            data="wikitext", exact=False, final_rtol=0.05),
    Program("feedforward", YJ, [T + "01-basics/feedforward_neural_network/main.py"],
            "MNIST MLP (Adam)", ["main.py"],
            subs={"main.py": [("num_epochs = 5", "num_epochs = 2", 1),
                              ("batch_size = 100", "batch_size = 50", 1)]},
            data="mnist", fast=True),
    Program("cnn", YJ, [T + "02-intermediate/convolutional_neural_network/main.py"],
            "MNIST CNN (Conv2d, BatchNorm2d, MaxPool2d, Adam)", ["main.py"],
            subs={"main.py": [("num_epochs = 5", "num_epochs = 1", 1),
                              ("batch_size = 100", "batch_size = 50", 1)]},
            data="mnist", final_rtol=1e-2),
    Program("rnn", YJ, [T + "02-intermediate/recurrent_neural_network/main.py"],
            "MNIST rows through a 2-layer LSTM (Adam)", ["main.py"],
            subs={"main.py": [("num_epochs = 2", "num_epochs = 1", 1),
                              ("batch_size = 100", "batch_size = 50", 1),
                              ("hidden_size = 128", "hidden_size = 32", 1)]},
            data="mnist", final_rtol=1e-2),
    Program("language_model", YJ, [T + "02-intermediate/language_model/data_utils.py",
                                   T + "02-intermediate/language_model/main.py"],
            "word-level LSTM language model (clip_grad_norm_, sampling)", ["main.py"],
            subs={"main.py": [("embed_size = 128", "embed_size = 32", 1),
                              ("hidden_size = 1024", "hidden_size = 64", 1),
                              ("num_epochs = 5", "num_epochs = 2", 1),
                              ("num_samples = 1000", "num_samples = 50", 1)]},
            data="lm", final_rtol=1e-2),
    Program("gan", YJ, [T + "03-advanced/generative_adversarial_network/main.py"],
            "MNIST GAN (two MLPs, BCELoss, two Adams)", ["main.py"],
            subs={"main.py": [("num_epochs = 200", "num_epochs = 2", 1),
                              ("batch_size = 100", "batch_size = 50", 1)]},
            data="mnist", final_rtol=1e-2),
]

BY_NAME = {p.name: p for p in PROGRAMS}
