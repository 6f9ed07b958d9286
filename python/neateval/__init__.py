"""neateval from Python: write populations, score them, read the results.

neateval scores populations of CNN genomes (docs/population-format.md).
This package speaks its population format (Population, read_population,
write_population, with its own safetensors reader and writer), builds CNN
genomes (cnn.chain, cnn.init_weights), and evaluates them through the HTTP
service (Client) or the command line (LocalRunner), both returning one
Result per genome:

    import sys; sys.path.insert(0, "python")          # no installation
    from neateval import Client, cnn, Population
    results = Client("http://127.0.0.1:8080").evaluate(Population([cnn.chain(0, [cnn.Dense(10)], rng=rng)]))

neat_python adapts an evaluator to neat-python's eval_genomes(genomes,
config); torch_bridge (where torch is installed) turns a genome into an
nn.Module and back. Only the standard library and numpy are needed.
"""

from . import cnn
from .client import Client
from .errors import (BadRequest, FormatError, Forbidden, NeatevalError, NotFound, PayloadTooLarge,
                     RunFailed, ServerError, ServiceBusy, StreamError, Unauthorized,
                     UnsupportedMediaType, UsageError)
from .local import LocalRunner
from .population import (FORMAT, Genome, Input, Node, Population, encode_population, read_population,
                         tensor_name, write_population)
from .results import Result, Results, Summary

__all__ = [
    "cnn", "Client", "LocalRunner", "FORMAT", "Genome", "Input", "Node", "Population",
    "encode_population", "read_population", "write_population", "tensor_name",
    "Result", "Results", "Summary", "NeatevalError", "FormatError", "BadRequest", "Unauthorized",
    "Forbidden", "NotFound", "PayloadTooLarge", "UnsupportedMediaType", "ServiceBusy",
    "ServerError", "StreamError", "UsageError", "RunFailed",
]
