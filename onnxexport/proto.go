package onnxexport

import (
	"encoding/binary"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// The field numbers of onnx.proto (IR version 8) that the exporter writes.
// Messages are encoded by hand with protowire: the model needs a dozen
// fields of seven messages, and generated code for the whole of onnx.proto
// would be far larger than this file.
const (
	// ModelProto
	modelIRVersion       = 1
	modelProducerName    = 2
	modelProducerVersion = 3
	modelDocString       = 6
	modelGraph           = 7
	modelOpsetImport     = 8
	modelMetadataProps   = 14

	// OperatorSetIdProto
	opsetDomain  = 1
	opsetVersion = 2

	// StringStringEntryProto
	entryKey   = 1
	entryValue = 2

	// GraphProto
	graphNode        = 1
	graphName        = 2
	graphInitializer = 5
	graphDocString   = 10
	graphInput       = 11
	graphOutput      = 12

	// NodeProto
	nodeInput     = 1
	nodeOutput    = 2
	nodeName      = 3
	nodeOpType    = 4
	nodeAttribute = 5

	// AttributeProto and its AttributeType values
	attrName  = 1
	attrF     = 2
	attrI     = 3
	attrInts  = 8
	attrType  = 20
	attrFloat = 1
	attrInt   = 2
	attrIntsT = 7

	// TensorProto and its DataType values
	tensorDims     = 1
	tensorDataType = 2
	tensorName     = 8
	tensorRawData  = 9
	dtFloat        = 1
	dtInt64        = 7

	// ValueInfoProto, TypeProto, TypeProto.Tensor, TensorShapeProto and
	// its Dimension
	valueName    = 1
	valueType    = 2
	typeTensor   = 1
	typeElemType = 1
	typeShape    = 2
	shapeDim     = 1
	dimValue     = 1
	dimParam     = 2
)

// IRVersion and Opset are the ONNX IR version and the version of the
// default ("ai.onnx") operator set the exported models declare. Opset 17 has
// every op the models need (GELU, new in opset 20, is written with Erf, as
// exactly as the format defines it) and is read by onnx 1.12 and later and
// by onnxruntime 1.13 and later.
const (
	IRVersion = 8
	Opset     = 17
)

// msg is an encoded protobuf message that fields are appended to.
type msg []byte

func (m msg) str(f protowire.Number, s string) msg {
	m = protowire.AppendTag(m, f, protowire.BytesType)
	return protowire.AppendString(m, s)
}

func (m msg) bytes(f protowire.Number, b []byte) msg {
	m = protowire.AppendTag(m, f, protowire.BytesType)
	return protowire.AppendBytes(m, b)
}

func (m msg) varint(f protowire.Number, v int64) msg {
	m = protowire.AppendTag(m, f, protowire.VarintType)
	return protowire.AppendVarint(m, uint64(v))
}

func (m msg) float(f protowire.Number, v float32) msg {
	m = protowire.AppendTag(m, f, protowire.Fixed32Type)
	return protowire.AppendFixed32(m, math.Float32bits(v))
}

// ints appends a repeated int64 field unpacked, as proto2 declares the
// ONNX fields that hold shapes and attribute lists.
func (m msg) ints(f protowire.Number, vs []int64) msg {
	for _, v := range vs {
		m = m.varint(f, v)
	}
	return m
}

// intsAttr is an AttributeProto of type INTS.
func intsAttr(name string, vs ...int64) msg {
	return msg(nil).str(attrName, name).varint(attrType, attrIntsT).ints(attrInts, vs)
}

// intAttr is an AttributeProto of type INT.
func intAttr(name string, v int64) msg {
	return msg(nil).str(attrName, name).varint(attrType, attrInt).varint(attrI, v)
}

// floatAttr is an AttributeProto of type FLOAT.
func floatAttr(name string, v float32) msg {
	return msg(nil).str(attrName, name).varint(attrType, attrFloat).float(attrF, v)
}

// floatTensor is a TensorProto of float32 values, stored little-endian in
// raw_data as the specification requires.
func floatTensor(name string, dims []int64, data []float32) msg {
	raw := make([]byte, 4*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	return msg(nil).ints(tensorDims, dims).varint(tensorDataType, dtFloat).str(tensorName, name).bytes(tensorRawData, raw)
}

// int64Tensor is a TensorProto of int64 values.
func int64Tensor(name string, dims []int64, data []int64) msg {
	raw := make([]byte, 8*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
	}
	return msg(nil).ints(tensorDims, dims).varint(tensorDataType, dtInt64).str(tensorName, name).bytes(tensorRawData, raw)
}

// valueInfo is a ValueInfoProto of a float tensor whose first dimension is
// the symbolic batch size "N" and whose others are dims.
func valueInfo(name string, dims ...int64) msg {
	shape := msg(nil).bytes(shapeDim, msg(nil).str(dimParam, "N"))
	for _, d := range dims {
		shape = shape.bytes(shapeDim, msg(nil).varint(dimValue, d))
	}
	tensor := msg(nil).varint(typeElemType, dtFloat).bytes(typeShape, shape)
	return msg(nil).str(valueName, name).bytes(valueType, msg(nil).bytes(typeTensor, tensor))
}
