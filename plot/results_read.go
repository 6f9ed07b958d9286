package plot

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// A Result is one genome's line of a results file (JSON Lines, as
// `neateval run` writes it), the fields the results plot needs.
type Result struct {
	GenomeID int64
	Accuracy float64 // in [0, 1]; NaN for a genome that got an error
	Params   int64
	FLOPs    int64 // per image
	Err      string
}

type resultJSON struct {
	GenomeID *int64   `json:"genome_id"`
	Accuracy *float64 `json:"accuracy"`
	Params   int64    `json:"params"`
	FLOPs    int64    `json:"flops"`
	Error    *string  `json:"error"`
}

// ReadResults reads a results file.
func ReadResults(path string) ([]Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseResults(f, path)
}

// ParseResults reads results in the results file's format from r; name
// names it in errors, which give the line.
func ParseResults(r io.Reader, name string) ([]Result, error) {
	var rs []Result
	err := eachLine(r, name, func(line []byte) error {
		var j resultJSON
		if err := jsonObject(line, &j); err != nil {
			return err
		}
		res, err := j.result()
		if err != nil {
			return err
		}
		rs = append(rs, res)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(rs) == 0 {
		return nil, &InputError{File: name, Err: errors.New("no results")}
	}
	return rs, nil
}

func (j *resultJSON) result() (Result, error) {
	if j.GenomeID == nil {
		return Result{}, errors.New(`no "genome_id"`)
	}
	r := Result{GenomeID: *j.GenomeID, Params: j.Params, FLOPs: j.FLOPs, Accuracy: math.NaN()}
	if r.Params < 0 || r.FLOPs < 0 {
		return r, fmt.Errorf("genome %d: negative params or flops", r.GenomeID)
	}
	if j.Error != nil {
		r.Err = *j.Error
		return r, nil
	}
	if j.Accuracy == nil {
		return r, fmt.Errorf(`genome %d: no "accuracy" and no "error"`, r.GenomeID)
	}
	if a := *j.Accuracy; !(a >= 0 && a <= 1) {
		return r, fmt.Errorf("genome %d: accuracy %g outside [0, 1]", r.GenomeID, a)
	}
	r.Accuracy = *j.Accuracy
	return r, nil
}
