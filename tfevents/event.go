package tfevents

import (
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of tensorflow/core/util/event.proto (message Event) and
// tensorflow/core/framework/summary.proto (Summary, Summary.Value); only
// those this package writes or reads. Other fields are skipped on reading.
const (
	fieldWallTime    protowire.Number = 1 // double
	fieldStep        protowire.Number = 2 // int64
	fieldFileVersion protowire.Number = 3 // string, in the oneof "what"
	fieldSummary     protowire.Number = 5 // Summary, in the oneof "what"

	fieldSummaryValue protowire.Number = 1 // repeated Summary.Value

	fieldValueTag    protowire.Number = 1 // string
	fieldValueSimple protowire.Number = 2 // float, in the oneof "value"
)

// FileVersion is the file_version of the first event of every file this
// package writes, the value TensorBoard's own writers use.
const FileVersion = "brain.Event:2"

// An Event is one record of an event file: the file's version (the first
// event), or a summary of scalar values at a step.
type Event struct {
	WallTime    float64 // seconds since the Unix epoch
	Step        int64
	FileVersion string  // set in the first event of a file only
	Values      []Value // the summary's scalar values
}

// A Value is one scalar of a summary. TensorBoard stores simple values as
// float32, so Scalar holds what a reader gets back.
type Value struct {
	Tag    string
	Scalar float32
}

// appendEvent appends e's protobuf encoding to b.
func appendEvent(b []byte, e *Event) []byte {
	b = protowire.AppendTag(b, fieldWallTime, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, math.Float64bits(e.WallTime))
	if e.Step != 0 {
		b = protowire.AppendTag(b, fieldStep, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(e.Step))
	}
	if e.FileVersion != "" {
		b = protowire.AppendTag(b, fieldFileVersion, protowire.BytesType)
		return protowire.AppendString(b, e.FileVersion)
	}
	var sum []byte
	for _, v := range e.Values {
		sum = protowire.AppendTag(sum, fieldSummaryValue, protowire.BytesType)
		sum = protowire.AppendBytes(sum, appendValue(nil, v))
	}
	b = protowire.AppendTag(b, fieldSummary, protowire.BytesType)
	return protowire.AppendBytes(b, sum)
}

func appendValue(b []byte, v Value) []byte {
	b = protowire.AppendTag(b, fieldValueTag, protowire.BytesType)
	b = protowire.AppendString(b, v.Tag)
	b = protowire.AppendTag(b, fieldValueSimple, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, math.Float32bits(v.Scalar))
}

var errProto = errors.New("malformed protobuf")

// parseEvent decodes an Event, keeping the fields this package knows.
func parseEvent(b []byte) (Event, error) {
	var e Event
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v uint64, raw []byte) error {
		switch {
		case num == fieldWallTime && typ == protowire.Fixed64Type:
			e.WallTime = math.Float64frombits(v)
		case num == fieldStep && typ == protowire.VarintType:
			e.Step = int64(v)
		case num == fieldFileVersion && typ == protowire.BytesType:
			e.FileVersion = string(raw)
		case num == fieldSummary && typ == protowire.BytesType:
			return parseSummary(raw, &e.Values)
		}
		return nil
	})
	return e, err
}

func parseSummary(b []byte, vals *[]Value) error {
	return eachField(b, func(num protowire.Number, typ protowire.Type, _ uint64, raw []byte) error {
		if num != fieldSummaryValue || typ != protowire.BytesType {
			return nil
		}
		var val Value
		err := eachField(raw, func(num protowire.Number, typ protowire.Type, v uint64, raw []byte) error {
			switch {
			case num == fieldValueTag && typ == protowire.BytesType:
				val.Tag = string(raw)
			case num == fieldValueSimple && typ == protowire.Fixed32Type:
				val.Scalar = math.Float32frombits(uint32(v))
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("summary value: %w", err)
		}
		*vals = append(*vals, val)
		return nil
	})
}

// eachField calls fn for each field of the message b: v holds a varint or
// fixed field's bits, raw a length-delimited field's bytes.
func eachField(b []byte, fn func(num protowire.Number, typ protowire.Type, v uint64, raw []byte) error) error {
	for off := 0; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("byte %d: %w: %w", off, errProto, protowire.ParseError(n))
		}
		var v uint64
		var raw []byte
		m := 0
		switch typ {
		case protowire.VarintType:
			v, m = protowire.ConsumeVarint(b[n:])
		case protowire.Fixed64Type:
			v, m = protowire.ConsumeFixed64(b[n:])
		case protowire.Fixed32Type:
			var v32 uint32
			v32, m = protowire.ConsumeFixed32(b[n:])
			v = uint64(v32)
		case protowire.BytesType:
			raw, m = protowire.ConsumeBytes(b[n:])
		default:
			m = protowire.ConsumeFieldValue(num, typ, b[n:])
		}
		if m < 0 {
			return fmt.Errorf("byte %d, field %d: %w: %w", off, num, errProto, protowire.ParseError(m))
		}
		if err := fn(num, typ, v, raw); err != nil {
			return err
		}
		b = b[n+m:]
		off += n + m
	}
	return nil
}
