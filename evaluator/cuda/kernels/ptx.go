package kernels

import _ "embed"

// Module is one module of the backend's kernels: its PTX, and machine code
// of the same PTX for one GPU architecture.
type Module struct {
	Name string
	PTX  string
	// Cubin is the PTX assembled by ptxas for the compute capability
	// CubinArch (90: sm_90, Hopper): a GPU of that capability loads it
	// without the driver's JIT. Any other GPU JIT-compiles PTX.
	Cubin     []byte
	CubinArch int
}

//go:embed gemm.ptx
var gemmPTX string

//go:embed gemm_tc.ptx
var gemmTCPTX string

//go:embed ops.ptx
var opsPTX string

//go:embed pop.ptx
var popPTX string

//go:embed gemm.sm_90.cubin
var gemmCubin []byte

//go:embed gemm_tc.sm_90.cubin
var gemmTCCubin []byte

//go:embed ops.sm_90.cubin
var opsCubin []byte

//go:embed pop.sm_90.cubin
var popCubin []byte

// Modules are the backend's modules.
var Modules = []Module{
	{Name: "gemm", PTX: gemmPTX, Cubin: gemmCubin, CubinArch: 90},
	{Name: "gemm_tc", PTX: gemmTCPTX, Cubin: gemmTCCubin, CubinArch: 90},
	{Name: "ops", PTX: opsPTX, Cubin: opsCubin, CubinArch: 90},
	{Name: "pop", PTX: popPTX, Cubin: popCubin, CubinArch: 90},
}
