// Package cluster scores populations on many devices and hosts through NATS
// JetStream: a Coordinator splits a population into work items, workers
// (one per device) score them, and the results come back to the
// coordinator's results file.
//
// The broker is NATS JetStream, not a home-made queue. Items go on a
// work-queue stream (ItemsStream) read by one durable pull consumer that
// every worker shares (WorkersName), with explicit acks: a worker acks an
// item once its results are published, signals InProgress every third of
// AckWait while it scores, and an item not acked in AckWait (its worker
// died) is handed to another worker, MaxDeliver times at most. Each item's
// genomes go into the object store (WeightsBucket) as a population file
// pair, so a worker fetches only the weights it scores; genomes that do not
// compile get their error results from the coordinator, as the evaluator
// gives them. An item carries the run's Identity (version, format, data
// set name and size, the SHA-256 of its pixels, fitness). Results are
// published as results-file lines on ResultsStream under the run id, de-duplicated by the item's
// message id, and the coordinator keeps one result per genome index.
//
//	b, _ := cluster.StartBroker(cluster.BrokerOptions{Port: -1}) // in-process
//	nc, _ := b.Connect("worker")
//	w, _ := cluster.NewWorker(nc, cluster.WorkerOptions{Identity: id, Scorer: ev})
//	go w.Run(ctx)
//	c, _ := cluster.NewCoordinator(coordConn, cluster.CoordinatorOptions{Identity: id})
//	results, err := c.Evaluate(ctx, pop, nil) // as evaluator.Evaluator.Evaluate
//
// Failures: an item that fails on its last delivery, or that the broker
// gives up on (the MAX_DELIVERIES advisory), gives its genomes error
// results naming the cause; a worker of another identity (version,
// population format, data set, fitness) refuses items; a coordinator that
// hears from no worker for WorkerTimeout returns a *NoWorkersError; a new
// coordinator of the same run takes the results already on the broker.
//
// Samples: Coordinator.Sampled scores on a sample of the workers' data set
// (the images datasets.Dataset.Sample draws with a seed), with a fitness
// the coordinator computes from the returned metrics. That is how a
// generation of `neateval evolve` is scored: the item carries the sample,
// each worker draws it from its own copy (Local.Sample, cached while a
// generation's items come), and the run's penalised fitness is applied to
// float64 metrics that round-trip exactly, so the evolution is the one a
// single process runs.
//
// Connect opens a connection with the [cluster] credentials (a .creds
// file, an nkey seed, a token from a file or $NEATEVAL_NATS_TOKEN) and TLS
// files; a refusal is a *ConnectError naming the server and what was
// presented, never a secret. StartBroker listens beyond loopback only with
// credentials.
//
// Session and OpenRemote plug the cluster into run.Run and run.Evolve
// (Spec.Remote, EvolveSpec.Remote): `neateval run|evolve --workers N` (an
// in-process broker and N local workers) and `--nats URL`; RunWorker and
// ServeBroker are `neateval worker` (`--evolve` for evolve runs) and
// `neateval broker`.
package cluster
