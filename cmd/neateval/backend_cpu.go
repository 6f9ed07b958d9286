package main

// The CPU backend registers itself as "cpu" (and the one "auto" falls back
// to) when its package is linked.
import _ "github.com/neateval/neateval/evaluator/cpu"
