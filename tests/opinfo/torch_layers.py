"""Rows of the differential table for the layer functions composed of ops
(in ``ops/conv.py``, ``pooling.py``, ``normalization.py``, ``upsampling.py`` ...): each against
PyTorch (values, dtypes, first and second derivatives, errors). Imported at the end of
``torch_core.py``, whose helpers it uses."""

from __future__ import annotations

import numpy as np

from tests.opinfo.torch_core import C, E, F, S, call_default

__all__: list = []

F("conv1d", (E(S(2, 3, 7), S(4, 3, 3)), E(S(2, 4, 9), S(6, 2, 3), S(6), stride=2, padding=1,
                                          groups=2),
             E(S(3, 6), S(2, 3, 2), dilation=2, padding="same"),
             E(S(2, 3, 7), S(4, 2, 3))),
  raises=RuntimeError)  # fmt: skip  (the last: channels do not match)
F("conv_transpose2d", (E(S(2, 3, 4, 4), S(3, 2, 3, 3)),
                       E(S(1, 4, 3, 5), S(4, 1, 2, 3), S(2), stride=2, padding=1,
                         output_padding=1, groups=2),
                       E(S(3, 3, 3), S(3, 2, 2, 2), dilation=2),
                       E(S(1, 3, 3, 3), S(2, 2, 2, 2))), raises=RuntimeError)  # fmt: skip
F("conv_transpose1d", (E(S(2, 3, 5), S(3, 2, 3), S(2), stride=3, padding=1, output_padding=2),
                       E(S(3, 4), S(3, 1, 2))))  # fmt: skip
F("unfold", (E(S(2, 3, 5, 4), args=(2,)),
             E(S(1, 2, 6, 7), kernel_size=(2, 3), stride=2, padding=1, dilation=(1, 2))))
F("fold", (E(S(2, 12, 12), output_size=(4, 5), kernel_size=2),
           E(S(1, 8, 9), output_size=(6, 5), kernel_size=2, stride=2, padding=1),
           E(S(1, 7, 9), output_size=(4, 4), kernel_size=2)), raises=RuntimeError)  # fmt: skip
F("adaptive_avg_pool1d", (E(S(2, 3, 10), args=(4,)), E(S(3, 7), args=(3,))))
F("adaptive_avg_pool2d", (E(S(2, 3, 7, 5), args=((3, 2),)), E(S(3, 5, 5), args=(7,)),
                          E(S(1, 2, 6, 5), args=((None, 3),))))  # fmt: skip
F("adaptive_max_pool1d", (E(S(2, 3, 10, fill="distinct"), args=(3,)),), second=False)
F("adaptive_max_pool2d", (E(S(2, 3, 7, 5, fill="distinct"), args=((3, 2),)),
                          E(S(2, 4, 4, fill="distinct"), args=(2,))), second=False)
# weight and bias are inputs to differentiate: after the input, before the other arguments
F("group_norm", (E(S(3, 4, 5), args=(2,)), E(S(2, 6, 2, 3), S(6), S(6), args=(3,)),
                 E(S(2, 3, 4), args=(2,))),
  call=lambda L, name, x, *wb, args: L.nn.functional.group_norm(x, *args, *wb),
  raises=RuntimeError)  # fmt: skip
F("instance_norm", (E(S(3, 4, 5)), E(S(2, 3, 4, 2), S(3), S(3), eps=0.1)),
  call=lambda L, name, x, *wb, **kw: L.nn.functional.instance_norm(
      x, **dict(zip(("weight", "bias"), wb)), **kw))  # fmt: skip
F("rms_norm", (E(S(2, 3, 4), args=((3, 4),)), E(S(2, 4), S(4), args=((4,),)),
               E(S(2, 4), args=((4,),), eps=0.5), E(S(2, 3), args=((2,),))),
  call=lambda L, name, x, *w, args, **kw: L.nn.functional.rms_norm(x, *args, *w, **kw),
  raises=RuntimeError)  # fmt: skip
F("dropout1d", (E(S(2, 3, 4), p=0.0), E(S(2, 3, 4), training=False), E(S(2, 3), p=1.5)),
  raises=ValueError)
F("dropout2d", (E(S(2, 3, 4, 4), p=0.0), E(S(2, 3, 2, 2), training=False),
                E(S(2, 3, 2, 2), p=-0.5)), raises=ValueError)  # fmt: skip
F("interpolate", (E(S(2, 3, 4, 5), scale_factor=2), E(S(1, 2, 4, 6), size=(5, 3)),
                  E(S(1, 2, 4, 6), size=(5, 7), mode="bilinear"),
                  E(S(1, 2, 4, 6), size=(5, 7), mode="bilinear", align_corners=True),
                  E(S(1, 2, 4, 6), scale_factor=(1.5, 0.5), mode="bilinear"),
                  E(S(2, 3, 5), size=8, mode="linear"),
                  E(S(2, 3, 5), size=7, mode="nearest-exact"),
                  E(S(1, 1, 4), size=2, scale_factor=2)), raises=ValueError)  # fmt: skip

# div's rounding modes (ops/arithmetic_args.py): PyTorch's values, dtypes and zero gradient
C("div", (E(S(2, 3, fill="wide"), S(3, fill="away"), rounding_mode="trunc"),
          E(S(2, 3, fill="wide"), S(2, 3, fill="away"), rounding_mode="floor"),
          E(S(4, dtype="int64"), S(4, dtype="int64", fill="classes"), rounding_mode="floor"),
          E(S(4, dtype="int64"), args=(-3,), rounding_mode="trunc"),
          E(S(3), args=(2.0,), rounding_mode="round")),
  only=("div", "divide"), raises=RuntimeError)  # fmt: skip

# cummax / cummin (ops/sorting.py): values, the last index among ties, NaN, gradients, ints
C("cum_extreme_index", (E(S(3, 5), args=(1,)), E(S(4, 3, layout="T"), dim=0), E(S(), args=(0,)),
                        E(S(2, 4, dtype="int64", fill="classes"), args=(1,)),
                        E(S(5, fill="distinct"), args=(0,)), E(S(3, 4), args=(2,)),
                        E(data=np.array([1.0, 3.0, 2.0, 3.0, np.nan, 5.0]), args=(0,))),
  call=lambda L, name, x=None, *a, data=None, **kw: call_default(
      L, name, x if data is None else L.tensor(data, requires_grad=True), *a, **kw),
  raises=(IndexError, TypeError))  # fmt: skip

F("max_pool1d", (E(S(2, 3, 8, fill="distinct"), args=(2,)),
                 E(S(3, 9, fill="distinct"), args=(3, 2, 1), dilation=2)), second=False)
F("avg_pool1d", (E(S(2, 3, 8), args=(2,)), E(S(1, 2, 7), args=(3, 2, 1), ceil_mode=True,
                                            count_include_pad=False)))  # fmt: skip
F("pixel_shuffle", (E(S(2, 8, 2, 3), args=(2,)), E(S(9, 2, 2), args=(3,)),
                    E(S(1, 6, 2, 2), args=(2,))), raises=RuntimeError)  # fmt: skip
F("pixel_unshuffle", (E(S(2, 2, 4, 6), args=(2,)), E(S(1, 1, 3, 4), args=(2,))),
  raises=RuntimeError)
F("dropout3d", (E(S(2, 3, 2, 2, 2), p=0.0), E(S(2, 3, 2, 2, 2), training=False)))
F("softmin", (E(S(2, 3), dim=1), E(S(4), args=(0,))))
F("upsample", (E(S(1, 2, 2, 3), scale_factor=2, mode="bilinear"),))
F("upsample_nearest", (E(S(1, 2, 2, 3), size=(3, 5)),))
F("upsample_bilinear", (E(S(1, 2, 2, 3), scale_factor=2),))
