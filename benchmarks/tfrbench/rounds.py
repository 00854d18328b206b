"""Sessions of two builds or routes that alternate: a slow spell of the machine falls on both."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .child import run


@dataclass
class Rounds:
    """What the children of each side measured: every run of each measurement, what each read
    returned, and the cores other processes took meanwhile."""

    runs: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    seen: dict[str, dict[str, Any]] = field(default_factory=dict)
    others: list[float] = field(default_factory=list)
    #: Anything else a child emits (a key besides runs, seen and others), by key and cores.
    extras: dict[str, dict[int, list[Any]]] = field(default_factory=dict)

    def extra(self, key: str) -> dict[int, list[Any]]:
        """What the children emitted as ``key`` (lists, joined), by cores; empty lists left out."""
        return {n: v for n, v in self.extras.get(key, {}).items() if v}

    def differ(self) -> list[str]:
        """The measurements whose results differ between the sides."""
        first, *rest = self.seen.values()
        return [what for what in first if any(other.get(what) != first[what] for other in rest)]


def alternate(
    rounds: int,
    sides: Sequence[str],
    cores: Sequence[int],
    command: Callable[[str, int], list[str]],
) -> Rounds:
    """``rounds`` rounds; in each, per side (the order of the two reversed every other round)
    and per cores, the child ``command(side, cores)``, which emits ``runs`` and ``seen`` keyed
    by measurement (names unique across cores) and ``others``."""
    out = Rounds({s: {} for s in sides}, {s: {} for s in sides})
    for round_ in range(rounds):
        for side in sides if round_ % 2 == 0 else list(reversed(sides)):
            for n in cores:
                result = run(command(side, n))
                out.seen[side].update(result["seen"])
                out.others.append(result["others"])
                for key, value in result.items():
                    if key not in ("runs", "seen", "others"):
                        out.extras.setdefault(key, {}).setdefault(n, []).extend(value)
                for what, times in result["runs"].items():
                    out.runs[side].setdefault(what, []).extend(times)
                medians = (f"{w} {statistics.median(t):.3f}s" for w, t in result["runs"].items())
                print(f"round {round_ + 1} {side} local[{n}]: " + ", ".join(medians), flush=True)
    return out
