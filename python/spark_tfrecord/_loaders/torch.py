"""The PyTorch side of :func:`spark_tfrecord.torch_dataset`: imported only when it is called."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
import torch.utils.data

from spark_tfrecord._loaders.source import RecordSource


def _tensor(value: Any) -> Any:
    return torch.from_numpy(np.ascontiguousarray(value)) if isinstance(value, np.ndarray) else value


class TorchDataset(RecordSource, torch.utils.data.Dataset):  # type: ignore[type-arg,misc,unused-ignore]
    """A map-style ``torch.utils.data.Dataset`` of a TFRecord folder's records: what
    :func:`spark_tfrecord.torch_dataset` returns."""

    def collate(self, records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """A batch of records as tensors, for ``DataLoader(..., collate_fn=ds.collate)``: the
        NumPy batch of :meth:`RecordSource.collate` with every array a tensor, and each sparse
        vector column a ``torch.sparse_coo_tensor`` of shape ``(B, size)``."""
        batch = super().collate(records)
        sparse = {c.key for c in self._layout.columns if c.shape == "vector" and c.sparse}
        out: dict[str, Any] = {}
        for key, value in batch.items():
            if key in sparse:
                indices, values, shape = value
                # The indices were checked (in range, increasing per row) as they were read.
                out[key] = torch.sparse_coo_tensor(
                    torch.from_numpy(indices.T.copy()),
                    torch.from_numpy(values),
                    shape,
                    check_invariants=False,
                )
            elif isinstance(value, tuple):
                out[key] = tuple(_tensor(v) for v in value)
            else:
                out[key] = _tensor(value)
        return out
