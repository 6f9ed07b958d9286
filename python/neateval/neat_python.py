"""An adapter with neat-python's calling convention.

neat-python calls ``eval_genomes(genomes, config)`` once per generation
with a list of (genome_id, genome) pairs and expects each genome's
``fitness`` to be set. make_eval_genomes returns such a function that turns
every genome into a CNN in the population format, scores the whole
generation in one evaluation (a Client or a LocalRunner) and sets
``genome.fitness``; a genome that could not be scored gets failed_fitness.
Each genome also gets ``genome.neateval_result``, its Result.

    from neateval import Client, neat_python
    eval_genomes = neat_python.make_eval_genomes(Client(url), to_cnn=my_converter, limit=2000)
    winner = neat.Population(config).run(eval_genomes, 50)

to_cnn(genome_id, genome, config) returns a neateval Genome (its id is
replaced by genome_id). Without one, default_to_cnn reads the genome's
``cnn`` attribute: a Genome (with weights), or a list of cnn layers (Conv,
MaxPool, ..., Dense), which is built once with He-initialised weights drawn
from genome_id and stored back in ``genome.cnn``. neat-python itself is not
needed by this module.
"""

import numpy as np

from . import cnn
from .population import Genome, Input, Population

__all__ = ["make_eval_genomes", "default_to_cnn"]


def default_to_cnn(genome_id, genome, config, input=None):
    """default_to_cnn is the CNN of genome's ``cnn`` attribute: a Genome, or
    a list of cnn layers built (once) into one with He weights."""
    spec = getattr(genome, "cnn", None)
    if isinstance(spec, Genome):
        return spec
    if isinstance(spec, (list, tuple)):
        built = cnn.chain(genome_id, list(spec), input=input, rng=np.random.default_rng(genome_id))
        genome.cnn = built
        return built
    raise TypeError(f"genome {genome_id}: no CNN: give make_eval_genomes a to_cnn, or set genome.cnn "
                    f"to a neateval Genome or a list of layers (got {spec!r})")


def make_eval_genomes(evaluator, to_cnn=None, input=None, num_classes=10, failed_fitness=0.0,
                      limit=None, fitness=None):
    """make_eval_genomes returns eval_genomes(genomes, config) for
    neat-python, scoring with evaluator (anything with Client's evaluate:
    a Client or a LocalRunner) on images of shape input (default 1×28×28)
    with num_classes classes. limit and fitness go to evaluate. An
    evaluation refused as a whole raises its exception from eval_genomes."""
    inp = input or Input()

    def convert(gid, genome, config):
        if to_cnn is not None:
            return to_cnn(gid, genome, config)
        return default_to_cnn(gid, genome, config, inp)

    def eval_genomes(genomes, config):
        genomes = list(genomes)
        if not genomes:
            return
        cnns = []
        for gid, genome in genomes:
            g = convert(gid, genome, config)
            cnns.append(g if g.id == gid else g.copy(id=gid))
        results = evaluator.evaluate(Population(cnns, inp, num_classes), limit=limit, fitness=fitness)
        for (gid, genome), r in zip(genomes, results):
            genome.fitness = r.fitness if r.ok else failed_fitness
            genome.neateval_result = r

    return eval_genomes
