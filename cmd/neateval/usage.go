package main

const usageText = `neateval scores populations of CNN genomes (NEAT) on a labelled image set,
on the CPU or a GPU, and writes one result per genome as JSON Lines.

Usage:
  neateval <command> [flags]

Commands:
  run       score a population (config.toml, flags override it)
  plan      show how a run would stage its population on a device of any
            size (mode, budgets, chunks, predicted peak), without running it
  serve     score populations sent over HTTP, keeping the device and the
            data set open across requests (docs/http-api.md)
  gen       write a seeded random population (JSON + safetensors)
  evolve    evolve CNN genomes with NEAT on the configured data set
  export    write genomes as ONNX models: one, every one, or the best of an
            evolve run
  bench     measure the CPU evaluation of generated populations on MNIST,
            against PyTorch and the machine's fp32 ceiling when available
  plot      draw an evolve run's fitness curve, a run's timeline or a
            population's results as a PNG
  worker    score work items of a cluster, taken from a NATS server
  broker    run a NATS server with JetStream for a cluster (file store)
  version   print the version, Go version, platform and CPU features
  help      print this text, or a command's flags: neateval help <command>
` + exitCodesText

const exitCodesText = `
Exit codes:
  0    ok: every genome has a result and none is an error
  1    the run failed: a broken population or dataset file, an I/O error, ...
  2    bad usage or config: the message names the flag or key to change
  3    the run completed but some genomes got an error result
       (their lines in the results file say why, in "error")
  130  interrupted by SIGINT or SIGTERM: the results written so far are kept;
       run again with --resume to score only the genomes still missing
`

const runUsage = `Usage: neateval run [--config FILE] [flags]

Scores every genome of a population on the validation set and writes the
results file (output.results): one JSON object per genome, one per line, in
population order; each line also carries "run", a hash of the population, data
set and fitness, so that --resume refuses a file of another run. Without
--config the built-in defaults are used (the same as the shipped config.toml):
a generated population of 64 genomes on the MNIST test set, on the CPU. Flags
override the config's keys.
`

const planUsage = `Usage: neateval plan [--config FILE] [--device-memory SIZE] [--json] [--population FILE] [--eval-batch-size N] [--fitness-eval-parallel N]

Prints how ` + "`neateval run`" + ` with this config would stage its population on the
device, without evaluating anything: the POP line of the run's log, the mode
(gpu_resident or cpu_staged), the budgets, the chunks against their lower
bound, whether the next chunk is prefetched, the predicted peak and the
genomes' sizes, then one row per chunk. The population and the data set are
loaded (or generated) as run does. --device-memory plans for a device of that
size (e.g. 16GiB on a laptop) instead of opening the configured one; the
genomes' sizes then come from the CPU backend's memory model.
`

const serveUsage = `Usage: neateval serve [--config FILE] [--addr HOST:PORT] [--token-file FILE] [--allow-dir DIR]... [flags]

Serves the HTTP API of docs/http-api.md: POST /v1/evaluate scores a
population (multipart: the JSON and safetensors files; or a path under an
--allow-dir folder) and streams one results-file line per genome, then a
summary; GET /v1/health, /v1/status and /metrics (Prometheus). The backend,
the device and the data set are opened once. One evaluation runs at a time;
--queue more may wait, others get 503. It listens on 127.0.0.1:8080 unless
told otherwise; any address that is not loopback needs a bearer token
(--token-file, or $NEATEVAL_TOKEN), and it refuses to start without one.
--tls-cert and --tls-key make it speak HTTPS. SIGINT/SIGTERM stop it: the
running evaluation finishes within --grace or is cancelled (exit 0).
`

const genUsage = `Usage: neateval gen --out DIR/pop.json [--size N] [--seed S] [--preset small|wide] [--input CxHxW] [--classes K]

Writes a seeded random population of valid CNN genomes: the JSON file named
by --out and its weights beside it (pop.safetensors for pop.json).
`

const evolveUsage = `Usage: neateval evolve [--config FILE] [--resume] [flags]

Runs NEAT over CNN genomes ([evolve] keys of the config): the fitness of each
genome is measured on evolve.val_size images drawn from the training split,
with the evaluator of ` + "`run`" + ` (same backend, memory and fitness keys). Each
generation is logged (event "generation": best, mean, species, size of the
best, the memory plan); the run is checkpointed in evolve.checkpoint_dir
every evolve.checkpoint_seconds, at the end and when it stops early; the
best genome so far is written to evolve.best in the population format. At
the end the best genome is scored on the test split. Interrupted or killed,
the run continues with --resume from its last checkpoint (a killed one loses
at most evolve.checkpoint_seconds of work), exactly as if it had not
stopped. With --workers N (in-process workers) or --nats URL (the
workers of "neateval worker --evolve" on that server) the generations are
scored on a cluster: the same run, generation for generation.
`

const benchUsage = `Usage: neateval bench [--preset small|wide|evolve|both|all] [--size N] [--seed S] [--images N] [--batch N] [--parallel P] [--threads T] [--torch auto|off] [--ort auto|off] [--ceiling auto|off] [--json FILE]

Generates the population(s) of the presets (as gen does; the evolve preset
is a sample of the genomes of one evolve run, shipped with the bench),
scores them on the real MNIST test set through the evaluator of ` + "`run`" + ` on the CPU, and reports
per population: seconds, images·genomes/s and GFLOP/s (FLOPs as the
population format counts them: Σ over genomes of FLOPs per image × images).
In the same run, when they are there, it also runs:

  - PyTorch (bench/torch_ref.py, with the Python of --python) on the same
    population and images, and prints neateval's throughput over PyTorch's
    and a fitness cross-check (accuracy equal up to rounding-decided ties,
    loss close); otherwise it says "PyTorch not installed";
  - the machine's fp32 ceiling (bench/ceiling.sh: OpenBLAS sgemm with
    OPENBLAS_CORETYPE=Cooperlake, needs cc and libopenblas-dev), before
    every neateval run and at the end, and prints each engine's share of
    the best measurement (the machine's peak in the same run).

bench/ is found from the working directory or the binary (or --bench-dir).
Progress goes to stderr, the table to stdout. Exit code 1 when the fitness
cross-check or PyTorch fails. --repeat R scores each population R times
with each engine, alternating, and keeps each engine's fastest run: on a
machine shared with other work, the run least disturbed. ` + "`make bench`" + ` runs
both presets with --repeat 2.
`

const versionUsage = `Usage: neateval version

Prints neateval's version, the Go version it was built with, the platform,
the CPU count and the CPU features the kernels can use.
`

const helpUsage = `Usage: neateval help [command]
`
