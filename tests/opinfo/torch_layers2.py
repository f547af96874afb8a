"""Rows of the differential table for the composite layer functions of ``nn/`` (the
``functional_conv``, ``functional_pooling``, ``functional_embedding`` and ``functional_vision``
modules, ``alpha_dropout``, ``bilinear``) and ``nn/ctc.py``: conv3d, max_pool3d, avg_pool3d,
max_unpool1d/2d, alpha_dropout, embedding_bag, bilinear, affine_grid, grid_sample, ctc_loss
(tests/nn/test_layers_round2.py tests them one by one, modules included). Imported at the end
of torch_core.py."""

from __future__ import annotations

import numpy as np

from tests.opinfo.torch_core import C, E, F, S

__all__: list = []

F("conv3d", (E(S(2, 4, 4, 5, 5), S(6, 2, 3, 2, 3), S(6), stride=(2, 1, 2), padding=1, groups=2),
             E(S(3, 4, 4, 4), S(2, 3, 2, 2, 2), padding="same", dilation=(1, 2, 1)),
             E(S(1, 3, 4, 4, 4), S(2, 2, 2, 2, 2))),
  raises=RuntimeError)  # fmt: skip  (the last: channels differ)
F("max_pool3d", (E(S(2, 2, 4, 5, 5, fill="distinct"), args=(2,)),
                 E(S(2, 5, 4, 6, fill="distinct"), args=((3, 2, 2), 2, 1), ceil_mode=True)),
  second=False)  # fmt: skip
F("avg_pool3d", (E(S(2, 2, 4, 5, 5), args=(2,)),
                 E(S(1, 2, 5, 4, 6), args=(3, 2, 1), count_include_pad=False, ceil_mode=True),
                 E(S(2, 4, 4, 4), args=(2,), divisor_override=3)))  # fmt: skip
_I2 = np.array([[[[0, 3], [9, 14]], [[5, 2], [8, 15]]]])  # (1, 2, 2, 2): one per 2x2 window
F("max_unpool2d", (E(S(1, 2, 2, 2), indices=_I2, kernel_size=2),
                   E(S(1, 2, 2, 2), indices=_I2, kernel_size=2, output_size=(5, 4)),
                   E(S(1, 2, 2, 2), indices=_I2 + 16, kernel_size=2)),
  raises=RuntimeError)  # fmt: skip
F("max_unpool1d", (E(S(2, 3), indices=np.array([[1, 2, 5], [0, 3, 4]]), kernel_size=2),
                   E(S(1, 2, 3), indices=np.array([[[1, 2, 5], [0, 3, 4]]]), kernel_size=2,
                     stride=2, output_size=[7])))  # fmt: skip
F("alpha_dropout", (E(S(3, 4)), E(S(3, 4), p=0.0, training=True), E(S(2, 3), p=1.0, training=True),
                    E(S(3, 4), p=0.4, training=False), E(S(3), p=1.5, training=True)),
  raises=ValueError)
F("bilinear", (E(S(4, 3), S(4, 2), S(5, 3, 2), S(5)), E(S(2, 4, 3), S(2, 4, 2), S(5, 3, 2)),
               E(S(4, 3), S(3, 2), S(5, 3, 2))), raises=RuntimeError)  # fmt: skip
F("affine_grid", (E(S(2, 2, 3), size=(2, 1, 3, 4), align_corners=False),
                  E(S(1, 2, 3), size=(1, 3, 2, 5), align_corners=True),
                  E(S(1, 3, 3), size=(1, 1, 2, 2), align_corners=True)),
  raises=ValueError)  # fmt: skip
F("grid_sample", (E(S(1, 2, 3, 4), S(1, 2, 3, 2), align_corners=False),
                  E(S(2, 1, 4, 3), S(2, 3, 2, 2), align_corners=True, padding_mode="border"),
                  E(S(1, 2, 3, 4), S(1, 2, 3, 2), align_corners=True, mode="nearest"),
                  E(S(1, 2, 3, 4), S(1, 2, 3, 2), align_corners=False, mode="cubic")),
  raises=ValueError)


def _embedding_bag(L, name, weight, *per_sample_weights, input=None, **kw):
    """A second spec is the bags' per-sample weights (differentiated too)."""
    if per_sample_weights:
        kw["per_sample_weights"] = per_sample_weights[0]
    return L.nn.functional.embedding_bag(input, weight, **kw)


_BAGS = np.array([1, 2, 4, 5, 4, 3, 2, 0])
C(None, (E(S(6, 3), input=_BAGS, offsets=np.array([0, 3, 3, 5])),
         E(S(6, 3), input=_BAGS.reshape(2, 4), mode="sum", padding_idx=2),
         E(S(6, 3, fill="distinct"), input=_BAGS, offsets=np.array([0, 2, 6]), mode="max"),
         E(S(6, 3), S(8), input=_BAGS, offsets=np.array([0, 3, 8]), mode="sum",
           include_last_offset=True),
         E(S(6, 3), input=_BAGS, offsets=np.array([1, 3]))),
  names=("F.embedding_bag",), call=_embedding_bag, raises=RuntimeError)  # fmt: skip


def _ctc(L, name, logits, **kw):
    return L.nn.functional.ctc_loss(logits.log_softmax(-1), **kw)


_TARGETS = np.array([[1, 2, 2], [3, 1, 0]])
C(None, (E(S(6, 2, 4), targets=_TARGETS, input_lengths=np.array([6, 5]),
           target_lengths=np.array([3, 2])),
         E(S(6, 2, 4), targets=np.array([1, 2, 2, 3]), input_lengths=np.array([6, 4]),
           target_lengths=np.array([3, 1]), reduction="sum", blank=0),
         E(S(5, 2, 4), targets=_TARGETS, input_lengths=np.array([2, 5]),
           target_lengths=np.array([3, 2]), reduction="none", zero_infinity=True),
         E(S(6, 4), targets=np.array([3, 3]), input_lengths=np.array(6),
           target_lengths=np.array(2)),
         E(S(6, 2, 4), targets=_TARGETS, input_lengths=np.array([7, 5]),
           target_lengths=np.array([3, 2]))),
  names=("F.ctc_loss",), call=_ctc, second=False, raises=RuntimeError)  # fmt: skip
