"""LocalRunner: the same evaluate as Client, over ``neateval run`` in a
subprocess, for a machine without a service.

    runner = LocalRunner("bin/neateval")              # or a config: LocalRunner(bin, "config.toml")
    results = runner.evaluate(pop, limit=2000)

It writes the population to a temporary folder, runs
``neateval run --population P --results R --log-format json --progress off``
and reads the results file and the run_summary log event. Exit codes map
as the README's: 0 and 3 (some genomes got an error result) return the
Results; 2 (bad usage or config) raises UsageError, 1 (the run failed: a
broken population file, say) and 130 (interrupted) raise RunFailed, each
with the message neateval printed.
"""

import json
import os
import subprocess
import tempfile

from . import errors
from .population import Population, write_population
from .results import in_order, parse_result, parse_summary

__all__ = ["LocalRunner"]


class LocalRunner:
    """LocalRunner evaluates populations with the neateval binary at
    binary, under the config file config (None: the built-in defaults) and
    with any extra flags of ``neateval run`` in args (say
    ["--dataset-kind", "fashion-mnist"]). timeout (seconds, None for none)
    bounds one run."""

    def __init__(self, binary="neateval", config=None, args=(), timeout=None):
        self.binary = os.fspath(binary)
        self.config = config
        self.args = list(args)
        self.timeout = timeout

    def evaluate(self, population, limit=None, fitness=None, on_result=None):
        """evaluate scores population (a Population or the path of a
        population JSON file) and returns Results in population order, with
        .summary. on_result, if given, is called with each Result once the
        run is over. limit and fitness are as Client.evaluate's; fitness
        needs config to be None (it is set through a config file)."""
        with tempfile.TemporaryDirectory(prefix="neateval-") as tmp:
            if isinstance(population, Population):
                path = os.path.join(tmp, "population.json")
                write_population(path, population)
            else:
                path = os.fspath(population)
            cmd = [self.binary, "run", "--population", path, "--results", os.path.join(tmp, "results.jsonl"),
                   "--log-format", "json", "--progress", "off"]
            cmd += self._config_args(tmp, fitness)
            if limit is not None:
                cmd += ["--limit", str(int(limit))]
            cmd += self.args
            proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=self.timeout)
            stderr = proc.stderr.decode("utf-8", "replace")
            if proc.returncode not in (0, 3):
                raise _exit_error(proc.returncode, stderr)
            results = self._read(os.path.join(tmp, "results.jsonl"), stderr)
        if on_result is not None:
            for r in results:
                on_result(r)
        return results

    def _config_args(self, tmp, fitness):
        if fitness is None:
            return ["--config", os.fspath(self.config)] if self.config is not None else []
        if self.config is not None:
            raise ValueError("LocalRunner: with a config file, set eval.fitness there, not through fitness=")
        if fitness not in ("accuracy", "neg_loss"):
            raise ValueError(f"fitness {fitness!r}, want 'accuracy' or 'neg_loss'")
        cfg = os.path.join(tmp, "fitness.toml")
        with open(cfg, "w") as f:
            f.write(f'[eval]\nfitness = "{fitness}"\n')
        return ["--config", cfg]

    @staticmethod
    def _read(results_path, stderr):
        with open(results_path, "rb") as f:
            got = [parse_result(json.loads(line)) for line in f if line.strip()]
        summary = None
        for line in stderr.splitlines():
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if isinstance(ev, dict) and ev.get("event") == "run_summary":
                summary = parse_summary(ev)
        n = summary.genomes if summary is not None else len(got)
        return in_order(got, n, summary)


def _exit_error(code, stderr):
    """_exit_error is the exception of a run that exited with code: the
    message is the line neateval printed last ("neateval: ...")."""
    lines = stderr.strip().splitlines()
    msg = lines[-1] if lines else f"exit status {code}"
    for line in lines:
        if line.startswith("neateval: "):
            msg = line[len("neateval: "):]
    if code == 2:
        return errors.UsageError(msg)
    return errors.RunFailed(msg, code)
