"""The previous page: the figures of the ``docs/benchmarks.md`` a run replaces, read before it is
overwritten, so that the goals table can set each figure beside its previous value."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@dataclass
class Previous:
    """The ratios of the previous page's results (by measurement and what it is compared with)
    and the first number of each line of its throughput table (by what), with its date."""

    date: str = ""
    ratios: dict[tuple[str, str], float] = field(default_factory=dict)
    numbers: dict[str, float] = field(default_factory=dict)

    def ratio(self, name: str, other: str) -> float | None:
        return self.ratios.get((name, other))

    def number(self, what: str) -> float | None:
        return self.numbers.get(what)


def read_page(path: Path) -> Previous:
    """The figures of the page at ``path``; none if there is no page."""
    if not path.is_file():
        return Previous()
    text = path.read_text()
    date = re.search(r"Measured by `benchmarks/run\.py` on ([^;]+);", text)
    previous = Previous(date=date.group(1).strip() if date else "")
    for line in text.splitlines():
        if not line.startswith("| ") or line.startswith("|---"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[4].startswith("**"):  # a line of the results
            ratio = NUMBER.search(cells[4])
            if ratio:
                previous.ratios[(cells[0], cells[2])] = float(ratio.group())
        elif len(cells) == 2:  # throughput, and the facts, which no goal reads
            number = NUMBER.search(cells[1])
            if number:
                previous.numbers.setdefault(cells[0], float(number.group()))
    return previous
