//go:build !noasm

package kernels

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestTileArgsLayout checks the field offsets the assembly uses
// (tileargs_amd64.h) against the Go struct.
func TestTileArgsLayout(t *testing.T) {
	var ta tileArgs
	want := map[string]uintptr{
		"TA_A": unsafe.Offsetof(ta.a), "TA_B": unsafe.Offsetof(ta.b), "TA_KOFF": unsafe.Offsetof(ta.koff),
		"TA_C": unsafe.Offsetof(ta.c), "TA_SEGS": unsafe.Offsetof(ta.segs), "TA_NSEG": unsafe.Offsetof(ta.segs) + 8,
		"TA_ROWBIAS": unsafe.Offsetof(ta.rowBias), "TA_COLBIAS": unsafe.Offsetof(ta.colBias),
		"TA_AOFF": unsafe.Offsetof(ta.aoff), "TA_BOFF": unsafe.Offsetof(ta.boff), "TA_COFF": unsafe.Offsetof(ta.coff),
		"TA_RBOFF": unsafe.Offsetof(ta.rboff), "TA_CBOFF": unsafe.Offsetof(ta.cboff), "TA_K": unsafe.Offsetof(ta.k),
		"TA_ASTRIDE": unsafe.Offsetof(ta.astride), "TA_LDC": unsafe.Offsetof(ta.ldc), "TA_MR": unsafe.Offsetof(ta.mr),
		"TA_ACT": unsafe.Offsetof(ta.act), "TA_BIAS": unsafe.Offsetof(ta.bias),
	}
	checkHeader(t, "tileargs_amd64.h", want)
	if unsafe.Sizeof(seg{}) != 16 {
		t.Errorf("seg is %d bytes, the assembly steps by 16", unsafe.Sizeof(seg{}))
	}
}

// TestWgArgsLayout checks the field offsets the Winograd assembly uses
// (wgargs_amd64.h) against wgArgs and wgRun.
func TestWgArgsLayout(t *testing.T) {
	var a wgArgs
	var u wgRun
	want := map[string]uintptr{
		"WG_DST": unsafe.Offsetof(a.dst), "WG_SRC": unsafe.Offsetof(a.src), "WG_BIAS": unsafe.Offsetof(a.bias),
		"WG_RUNS": unsafe.Offsetof(a.runs), "WG_NRUN": unsafe.Offsetof(a.runs) + 8,
		"WG_DOFF": unsafe.Offsetof(a.dOff), "WG_SOFF": unsafe.Offsetof(a.sOff), "WG_CNT": unsafe.Offsetof(a.cnt),
		"WG_ROWS": unsafe.Offsetof(a.rows), "WG_DROW": unsafe.Offsetof(a.dRow), "WG_SROW": unsafe.Offsetof(a.sRow),
		"WG_DXI": unsafe.Offsetof(a.dXi), "WG_SXI": unsafe.Offsetof(a.sXi), "WG_PLANE": unsafe.Offsetof(a.plane),
		"WG_WQ": unsafe.Offsetof(a.wq), "WG_BOFF": unsafe.Offsetof(a.bOff), "WG_ACT": unsafe.Offsetof(a.act),
		"RUN_SRC": unsafe.Offsetof(u.src), "RUN_DST": unsafe.Offsetof(u.dst), "RUN_LANE": unsafe.Offsetof(u.lane),
		"RUN_CNT": unsafe.Offsetof(u.cnt), "RUN_ROWS": unsafe.Offsetof(u.rows), "RUN_N": unsafe.Offsetof(u.n),
	}
	checkHeader(t, "wgargs_amd64.h", want)
	if unsafe.Sizeof(u) != 32 || wgRunWords*4 != 32 {
		t.Errorf("wgRun is %d bytes, the assembly steps by 32", unsafe.Sizeof(u))
	}
}

// checkHeader checks that the #defines of an assembly header are exactly
// the offsets in want.
func checkHeader(t *testing.T, name string, want map[string]uintptr) {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 3 || fs[0] != "#define" {
			continue
		}
		off, err := strconv.Atoi(fs[2])
		if err != nil {
			t.Fatal(err)
		}
		if w, ok := want[fs[1]]; !ok || uintptr(off) != w {
			t.Errorf("%s = %d, struct says %d (known %v)", fs[1], off, w, ok)
		}
		seen++
	}
	if seen != len(want) {
		t.Errorf("header defines %d offsets, want %d", seen, len(want))
	}
}
