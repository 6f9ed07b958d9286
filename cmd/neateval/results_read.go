package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// headerPrefix is how every header line starts (encodeHeader).
const headerPrefix = `{"neateval_results":`

// tornHeader reports whether data, which holds no whole line, can be what a
// crash left of a header line: empty, or a prefix of one.
func tornHeader(data []byte) bool {
	n := min(len(data), len(headerPrefix))
	return bytes.Equal(data[:n], []byte(headerPrefix)[:n])
}

// ReadResults reads a whole results file: the header and the result lines
// in file order. A torn last line (no newline: what a crash leaves) is
// ignored. name is used in messages.
func ReadResults(r io.Reader, name string) (ResultsHeader, []Result, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return ResultsHeader{}, nil, fmt.Errorf("results %s: %w", name, err)
	}
	h, rs, valid, err := parseResults(data, name)
	if err == nil && valid == 0 {
		err = fmt.Errorf("results %s: no header line", name)
	}
	return h, rs, err
}

// resultLine is a result line as read: pointers tell absent from zero.
type resultLine struct {
	GenomeID *int64   `json:"genome_id"`
	Index    *int     `json:"index"`
	Fitness  *float64 `json:"fitness"`
	Accuracy *float64 `json:"accuracy"`
	Loss     *float64 `json:"loss"`
	Images   *int     `json:"images"`
	Error    *string  `json:"error"`
	Params   int64    `json:"params"`
	FLOPs    int64    `json:"flops"`
	Seconds  float64  `json:"seconds"`
}

// parseResults reads the whole lines of data: a header line, then result
// lines, each checked (index in range and not repeated, metrics consistent
// with error). Bytes after the last newline are a torn line and are not
// read; valid is the length of data up to and including that newline (0 when
// there is no whole line: an empty file, or a header torn by a crash).
// Blank lines are skipped.
func parseResults(data []byte, name string) (h ResultsHeader, results []Result, valid int64, err error) {
	end := bytes.LastIndexByte(data, '\n') + 1
	valid = int64(end)
	lineNo, haveHeader := 0, false
	seen := map[int]bool{}
	for rest := data[:end]; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		line := rest[:i]
		rest = rest[i+1:]
		lineNo++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if !haveHeader {
			h, err = parseHeader(line)
			if err != nil {
				return h, nil, valid, fmt.Errorf("results %s: line %d: %w", name, lineNo, err)
			}
			haveHeader = true
			continue
		}
		r, err := parseResultLine(line, h.Genomes)
		if err != nil {
			return h, nil, valid, fmt.Errorf("results %s: line %d: %w", name, lineNo, err)
		}
		if seen[r.Index] {
			return h, nil, valid, fmt.Errorf("results %s: line %d: genome %d: index %d appears twice", name, lineNo, r.GenomeID, r.Index)
		}
		seen[r.Index] = true
		results = append(results, r)
	}
	if !haveHeader {
		valid = 0
	}
	return h, results, valid, nil
}

// maxResultsGenomes bounds the header's genome count.
const maxResultsGenomes = 1<<31 - 1

func parseHeader(line []byte) (ResultsHeader, error) {
	var raw struct {
		Version    *int    `json:"neateval_results"`
		Population *string `json:"population"`
		Genomes    *int    `json:"genomes"`
		Dataset    *string `json:"dataset"`
		Fitness    *string `json:"fitness"`
	}
	if err := json.Unmarshal(line, &raw); err != nil || raw.Version == nil {
		return ResultsHeader{}, fmt.Errorf("not a neateval results header (want a JSON object with \"neateval_results\")")
	}
	switch {
	case *raw.Version != resultsVersion:
		return ResultsHeader{}, fmt.Errorf("results format %d; this neateval reads format %d", *raw.Version, resultsVersion)
	case raw.Population == nil || raw.Genomes == nil || raw.Dataset == nil || raw.Fitness == nil:
		return ResultsHeader{}, fmt.Errorf("header lacks one of \"population\", \"genomes\", \"dataset\", \"fitness\"")
	case *raw.Genomes < 0 || *raw.Genomes > maxResultsGenomes:
		return ResultsHeader{}, fmt.Errorf("header: genomes = %d out of range", *raw.Genomes)
	}
	return ResultsHeader{Version: *raw.Version, Population: *raw.Population, Genomes: *raw.Genomes, Dataset: *raw.Dataset, Fitness: *raw.Fitness}, nil
}

func parseResultLine(line []byte, n int) (Result, error) {
	var raw resultLine
	if err := json.Unmarshal(line, &raw); err != nil {
		return Result{}, fmt.Errorf("not a result line: %w", err)
	}
	if raw.GenomeID == nil || raw.Index == nil || raw.Images == nil {
		return Result{}, fmt.Errorf("result line lacks one of \"genome_id\", \"index\", \"images\"")
	}
	r := Result{
		GenomeID: *raw.GenomeID, Index: *raw.Index,
		Fitness: raw.Fitness, Accuracy: raw.Accuracy, Loss: raw.Loss,
		Images: *raw.Images, Error: raw.Error,
		Params: raw.Params, FLOPs: raw.FLOPs, Seconds: raw.Seconds,
	}
	if err := r.check(n); err != nil {
		return Result{}, err
	}
	return r, nil
}
