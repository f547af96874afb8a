"""``torch.nn.modules.rnn``'s path: the recurrent layers, the same classes as ``tg.nn``'s.

``from tinygrad_edu.nn.modules.rnn import RNN`` works as PyTorch's import does;
the layers themselves live in :mod:`tinygrad_edu.nn`.
"""

from __future__ import annotations

from .. import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell

__all__ = ["RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"]
