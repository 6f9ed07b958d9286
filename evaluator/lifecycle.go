package evaluator

import "context"

// Score scores one genome whose weights the caller has put on the device
// (with Backend().Load, or as part of a chunk of the staging Manager), on
// the evaluator's validation set, under its batch controller and with its
// fitness function: what Evaluate does for each genome of a chunk. index is
// the genome's position in the caller's population, echoed in the result.
//
// It is the hook for a program that drives the staging lifecycle itself:
//
//	plan, err := e.Manager().PrepareForEval(e.Items(graphs, order), fixed, load)
//	for c := range e.Manager().IterEvalChunks(ctx) {
//		e.Manager().LoadChunk(ctx, c)
//		for _, i := range c.Indexes {
//			m, err := c.Model(i)   // the chunk's weights of genome i
//			r, err := e.Score(ctx, i, m.(evaluator.Model))
//		}
//		e.Manager().UnloadChunk(c)
//	}
//
// A genome that cannot fit on the device even one image at a time gets a
// result with its error; any other error (a cancelled context) is
// returned. Results go to Options.OnResult and the log as Evaluate's do.
// Score is safe to call from several goroutines at once, each with its own
// model, up to fitness_eval_parallel of them.
func (e *Evaluator) Score(ctx context.Context, index int, m Model) (Result, error) {
	r, err := scoreGenome(ctx, e.b, e.ctl, &e.opts, index, m, e.data, needOf(e.b, m.Graph(), e.data))
	if err != nil {
		return Result{}, err
	}
	e.deliver(r)
	return r, nil
}
