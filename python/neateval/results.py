"""Results of an evaluation: one Result per genome, and a Summary.

A Result is one line of neateval's results file (README, "Results"), the
same whether it came from the service's stream or from ``neateval run``.
Results is a list of them in population order, with the run's Summary.
"""

from dataclasses import dataclass, fields
from typing import Optional

__all__ = ["Result", "Summary", "Results", "parse_result", "parse_summary"]


@dataclass
class Result:
    """Result is one genome's result. A genome that could not be scored has
    error set and fitness, accuracy and loss None."""

    genome_id: int
    index: int
    fitness: Optional[float]
    accuracy: Optional[float]
    loss: Optional[float]
    images: int
    error: Optional[str]
    params: int = 0
    flops: int = 0
    seconds: float = 0.0
    run: str = ""

    @property
    def ok(self):
        """ok says whether the genome was scored (error is None)."""
        return self.error is None


@dataclass
class Summary:
    """Summary is a run's summary: the fields of neateval's run_summary log
    event. best_genome is None when no genome was scored."""

    genomes: int = 0
    failed: int = 0
    images: int = 0
    seconds: float = 0.0
    images_genomes_per_s: float = 0.0
    best_fitness: Optional[float] = None
    best_genome: Optional[int] = None
    mean_fitness: Optional[float] = None


class Results(list):
    """Results is a list of Result in population order, with summary (a
    Summary, or None if the source gave none)."""

    def __init__(self, items=(), summary=None):
        super().__init__(items)
        self.summary = summary


_RESULT_KEYS = {f.name for f in fields(Result)}
_SUMMARY_KEYS = {f.name for f in fields(Summary)}


def parse_result(obj):
    """parse_result makes a Result of a decoded result line; keys this
    version does not know are ignored."""
    if not isinstance(obj, dict) or "genome_id" not in obj or "index" not in obj:
        raise ValueError(f"not a result line: {obj!r}")
    kw = {k: v for k, v in obj.items() if k in _RESULT_KEYS}
    for k in ("fitness", "accuracy", "loss", "error"):
        kw.setdefault(k, None)
    kw.setdefault("images", 0)
    return Result(**kw)


def parse_summary(obj):
    """parse_summary makes a Summary of a decoded summary object (keys this
    version does not know are ignored)."""
    return Summary(**{k: v for k, v in obj.items() if k in _SUMMARY_KEYS})


def in_order(results, n, summary=None):
    """in_order returns Results sorted by index, checking that each of the
    n genomes has exactly one result."""
    by_index = {}
    for r in results:
        if not 0 <= r.index < n or r.index in by_index:
            raise ValueError(f"result of genome {r.genome_id}: index {r.index} is out of range or repeated")
        by_index[r.index] = r
    if len(by_index) != n:
        missing = sorted(set(range(n)) - set(by_index))
        raise ValueError(f"{n - len(by_index)} of {n} genomes have no result (indexes {missing[:10]})")
    return Results((by_index[i] for i in range(n)), summary)
