package kernels

import _ "embed"

// Module is one PTX module.
type Module struct {
	Name string
	PTX  string
}

//go:embed gemm.ptx
var gemmPTX string

//go:embed ops.ptx
var opsPTX string

// Modules are the backend's PTX modules.
var Modules = []Module{{"gemm", gemmPTX}, {"ops", opsPTX}}
