"""The PyTorch side of :func:`spark_tfrecord.torch_dataset`: imported only when it is called."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
import torch.utils.data

from spark_tfrecord._loaders.source import RecordSource

#: Up to this many bytes of tensors, a worker's batch pickles by value (cheaper than shared memory).
_BY_VALUE = 1 << 20


def _tensor(value: Any) -> Any:
    return torch.from_numpy(np.ascontiguousarray(value)) if isinstance(value, np.ndarray) else value


def _dense(value: Any) -> bool:
    """Whether a value is a tensor that pickles by value as its NumPy array, losing nothing."""
    return (
        type(value) is torch.Tensor
        and value.layout == torch.strided
        and value.device.type == "cpu"
        and not value.requires_grad
    )


def _tensors(batch: dict[str, Any], dense: dict[str, tuple[bool, ...]]) -> dict[str, Any]:
    """Unpickle a batch: arrays that were tensors (``dense``, per key and part) become tensors."""
    for key, flags in dense.items():
        value = batch[key]
        parts = value if isinstance(value, tuple) else (value,)
        parts = tuple(torch.from_numpy(v) if f else v for v, f in zip(parts, flags))
        batch[key] = parts if isinstance(value, tuple) else parts[0]
    return batch


class _ByValue(dict):  # type: ignore[type-arg]
    """A worker's batch whose tensors pickle by value (see _BY_VALUE); unpickles as a dict."""

    def __reduce__(self) -> Any:
        batch: dict[str, Any] = {}
        dense: dict[str, tuple[bool, ...]] = {}
        for key, value in self.items():
            parts = value if isinstance(value, tuple) else (value,)
            flags = tuple(_dense(v) for v in parts)
            if any(flags):
                dense[key] = flags
            arrays = tuple(v.numpy() if f else v for v, f in zip(parts, flags))
            batch[key] = arrays if isinstance(value, tuple) else arrays[0]
        return _tensors, (batch, dense)


class TorchDataset(RecordSource, torch.utils.data.Dataset):  # type: ignore[type-arg,misc,unused-ignore]
    """What :func:`spark_tfrecord.torch_dataset` returns."""

    def collate(self, records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """A batch of tensors for ``DataLoader(collate_fn=ds.collate)``; sparse vectors as COO."""
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
        if torch.utils.data.get_worker_info() is not None:
            parts = [t for v in out.values() for t in (v if isinstance(v, tuple) else (v,))]
            if sum(t.nbytes for t in parts if _dense(t)) <= _BY_VALUE:
                return _ByValue(out)
        return out
