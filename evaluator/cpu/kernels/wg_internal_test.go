package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// wgVal returns a float with NaN (two payloads), ±Inf, ±0, huge, tiny and
// subnormal magnitudes among ordinary ones.
func wgVal(r *rand.Rand) float32 {
	sign := float32(1 - 2*r.IntN(2))
	switch r.IntN(48) {
	case 0:
		return math.Float32frombits(0x7fc00000)
	case 1:
		return math.Float32frombits(0xffc01234)
	case 2:
		return sign * float32(math.Inf(1))
	case 3:
		return float32(math.Copysign(0, float64(sign)))
	case 4:
		return sign * r.Float32() * 3e38
	case 5:
		return sign * r.Float32() * 1e-40
	case 6:
		return sign * r.Float32() * 1e-30
	case 7:
		return sign * r.Float32() * 1e30
	}
	return sign * r.Float32() * float32(math.Pow(10, float64(r.IntN(7)-3)))
}

func wgVals(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = wgVal(r)
	}
	return x
}

// wgFill is the sentinel pattern of the destinations: distinct NaNs, so a
// stray write is seen whatever it writes.
func wgFill(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = math.Float32frombits(0x7f800001 + uint32(i)%0x3fffff)
	}
	return x
}

// wgCompare fails t unless got and want hold the same bits at every index
// but those in junk (whole-vector lanes past cnt that the kernel may write).
// A NaN may carry another NaN's payload: when both operands of a sum are
// NaN, which one the result is depends on the operand order the Go compiler
// picks (the assembly mirrors go1.26's, so payloads match there; such
// differences are logged).
func wgCompare(t *testing.T, what string, got, want []float32, junk map[int]bool) {
	t.Helper()
	nan := 0
	for i := range want {
		if junk[i] {
			continue
		}
		if g, w := math.Float32bits(got[i]), math.Float32bits(want[i]); g != w {
			if got[i] != got[i] && want[i] != want[i] {
				nan++
				continue
			}
			t.Fatalf("%s: index %d: got %#x (%v), want %#x (%v)", what, i, g, got[i], w, want[i])
		}
	}
	if nan > 0 {
		t.Logf("%s: %d NaNs with another payload", what, nan)
	}
}

// wgVec rounds cnt up to whole vectors of 16 lanes.
func wgVec(cnt int) int { return (cnt + 15) &^ 15 }

// TestWgIn holds wgIn on every path to wgInGo bit for bit: n = 4 and 6,
// cnt 1..64 (every value), rows 1..5, strides and offsets with slack; dst
// outside the cnt lanes of each (ξ, channel) row stays as it was, but for
// the lanes up to the next multiple of 16.
func TestWgIn(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, p := range Paths() {
		for _, n := range []int{4, 6} {
			for rows := 1; rows <= 5; rows++ {
				for cnt := 1; cnt <= 64; cnt++ {
					wq := cnt + 3 + r.IntN(9)
					plane := 3*wq + r.IntN(5)
					sRow := 4*plane + r.IntN(7)
					sOff := r.IntN(9)
					src := wgVals(r, sOff+rows*sRow+3*wq+16+64)
					dRow := wgVec(cnt) + r.IntN(4)
					dXi := rows*dRow + r.IntN(5)
					dOff := r.IntN(7)
					dlen := dOff + n*n*dXi + 32
					want, got := wgFill(dlen), wgFill(dlen)
					a := wgArgs{src: src, sOff: sOff, cnt: cnt, rows: rows, dOff: dOff,
						dRow: dRow, sRow: sRow, dXi: dXi, plane: plane, wq: wq}
					a.dst = want
					wgInGo(n, &a)
					a.dst = got
					wgIn(p, n, &a)
					junk := map[int]bool{}
					for xi := range n * n {
						for c := range rows {
							for l := cnt; l < wgVec(cnt); l++ {
								junk[dOff+xi*dXi+c*dRow+l] = true
							}
						}
					}
					wgCompare(t, fmt.Sprintf("%v n=%d rows=%d cnt=%d", p, n, rows, cnt), got, want, junk)
				}
			}
		}
	}
}

// TestWgOut holds wgOut on every path to wgOutGo bit for bit: n = 4 and 6,
// every activation, cnt 1..64, rows 1..5, offsets and strides with slack,
// the bias from an offset.
func TestWgOut(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, p := range Paths() {
		for _, n := range []int{4, 6} {
			for act := range 3 {
				for rows := 1; rows <= 5; rows++ {
					for cnt := 1; cnt <= 64; cnt++ {
						sRow := wgVec(cnt) + r.IntN(5)
						sXi := rows*sRow + r.IntN(5)
						sOff := r.IntN(7)
						src := wgVals(r, sOff+n*n*sXi+16)
						bOff := r.IntN(4)
						bias := wgVals(r, bOff+rows+r.IntN(3))
						dRow := wgVec(cnt) + r.IntN(4)
						dXi := rows*dRow + r.IntN(5)
						dOff := r.IntN(7)
						dlen := dOff + 4*dXi + 32
						want, got := wgFill(dlen), wgFill(dlen)
						a := wgArgs{src: src, bias: bias, sOff: sOff, cnt: cnt, rows: rows, dOff: dOff,
							dRow: dRow, sRow: sRow, dXi: dXi, sXi: sXi, bOff: bOff, act: act}
						a.dst = want
						wgOutGo(n, &a)
						a.dst = got
						wgOut(p, n, &a)
						junk := map[int]bool{}
						for k := range 4 {
							for c := range rows {
								for l := cnt; l < wgVec(cnt); l++ {
									junk[dOff+k*dXi+c*dRow+l] = true
								}
							}
						}
						wgCompare(t, fmt.Sprintf("%v n=%d act=%d rows=%d cnt=%d", p, n, act, rows, cnt), got, want, junk)
					}
				}
			}
		}
	}
}

// TestWgOutAct checks the activation of wgOut on chosen sums: −0, NaN,
// ±Inf, tiny negatives (whose 0.01·x underflows) and both signs, through a
// zero bias and m with one non-zero corner (Y = m[0]).
func TestWgOutAct(t *testing.T) {
	vals := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), math.Float32frombits(0xffc01234),
		float32(math.Inf(1)), float32(math.Inf(-1)), -1e-45, 1e-45, -1e-38, -3, 3, -3e38, 3e38}
	for _, p := range Paths() {
		for _, n := range []int{4, 6} {
			for act := range 3 {
				cnt := len(vals)
				src := make([]float32, n*n*32)
				copy(src, vals) // ξ = 0 (only m[0][0] feeds all four outputs)
				want, got := wgFill(4*32+16), wgFill(4*32+16)
				a := wgArgs{src: src, bias: []float32{0}, cnt: cnt, rows: 1, dRow: 32, sRow: 32, dXi: 32, sXi: 32, act: act}
				a.dst = want
				wgOutGo(n, &a)
				a.dst = got
				wgOut(p, n, &a)
				junk := map[int]bool{}
				for k := range 4 {
					for l := cnt; l < 16; l++ {
						junk[k*32+l] = true
					}
				}
				wgCompare(t, fmt.Sprintf("%v n=%d act=%d", p, n, act), got, want, junk)
			}
		}
	}
}

// TestWgStore holds wgStore on every path to wgStoreGo bit for bit over the
// whole destination (outputs and the floats around and between them): runs
// of 1..128 outputs (odd and even), of 1 and 2 rows, 1, 2 and 5 channels.
func TestWgStore(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, p := range Paths() {
		for _, rows := range []int{1, 2, 5} {
			for trial := range 60 {
				nrun := 1 + r.IntN(4)
				runs := make([]wgRun, nrun)
				wq := 0
				lane := 0
				for i := range runs {
					n := 1 + r.IntN(128)
					if trial < 32 {
						n = 1 + trial + 32*i // every n mod 32
					}
					runs[i] = wgRun{dst: int32(wq + r.IntN(3)), lane: int32(lane), rows: int32(1 + r.IntN(2)), n: int32(n)}
					runs[i].cnt = int32((n + 1) / 2)
					wq = int(runs[i].dst) + n
					lane += (n+1)/2 + r.IntN(3)
				}
				wq += r.IntN(3)
				sRow := lane + 16 + r.IntN(4)
				sXi := rows*sRow + r.IntN(5)
				src := wgVals(r, 4*sXi)
				dRow := 2*wq + r.IntN(5)
				dlen := rows*dRow + 40
				want, got := wgFill(dlen), wgFill(dlen)
				a := wgArgs{src: src, runs: runs, rows: rows, dRow: dRow, sRow: sRow, sXi: sXi, wq: wq}
				a.dst = want
				wgStoreGo(&a)
				a.dst = got
				wgStore(p, &a)
				wgCompare(t, fmt.Sprintf("%v rows=%d runs=%v", p, rows, runs), got, want, nil)
			}
		}
	}
}

// clearPast zeroes the lanes past cnt of every row of dRow floats in dst:
// the kernels leave junk there.
func clearPast(dst []float32, cnt, dRow int) {
	for r := 0; r+dRow <= len(dst); r += dRow {
		clear(dst[r+cnt : r+dRow])
	}
}

// TestWgPathsAgree holds the SIMD paths' transforms to each other bit for
// bit, NaN payloads included (the same instruction sequences at 8 and 16
// lanes), where a machine has more than one.
func TestWgPathsAgree(t *testing.T) {
	var ps []Path
	for _, p := range Paths() {
		if p != PureGo {
			ps = append(ps, p)
		}
	}
	if len(ps) < 2 {
		t.Skip("fewer than two SIMD paths")
	}
	r := rand.New(rand.NewPCG(7, 8))
	exact := func(what string, got, want []float32) {
		t.Helper()
		for i := range want {
			if g, w := math.Float32bits(got[i]), math.Float32bits(want[i]); g != w {
				t.Fatalf("%s: index %d: got %#x, want %#x", what, i, g, w)
			}
		}
	}
	for _, n := range []int{4, 6} {
		for cnt := 1; cnt <= 48; cnt++ {
			rows := 1 + r.IntN(4)
			wq := cnt + 3
			plane := 3 * wq
			src := wgVals(r, rows*4*plane+3*wq+16+64)
			dRow := wgVec(cnt)
			in := wgArgs{src: src, cnt: cnt, rows: rows, dRow: dRow, sRow: 4 * plane, dXi: rows * dRow, plane: plane, wq: wq}
			var first []float32
			for _, p := range ps {
				in.dst = make([]float32, n*n*rows*dRow)
				wgIn(p, n, &in)
				clearPast(in.dst, cnt, dRow)
				if first == nil {
					first = in.dst
				} else {
					exact(fmt.Sprintf("wgIn %v against %v n=%d cnt=%d", p, ps[0], n, cnt), in.dst, first)
				}
			}
			for act := range 3 {
				sXi := rows * dRow
				out := wgArgs{src: wgVals(r, n*n*sXi), bias: wgVals(r, rows), cnt: cnt, rows: rows,
					dRow: dRow, sRow: dRow, dXi: rows * dRow, sXi: sXi, act: act}
				first = nil
				for _, p := range ps {
					out.dst = make([]float32, 4*rows*dRow)
					wgOut(p, n, &out)
					clearPast(out.dst, cnt, dRow)
					if first == nil {
						first = out.dst
					} else {
						exact(fmt.Sprintf("wgOut %v against %v n=%d act=%d cnt=%d", p, ps[0], n, act, cnt), out.dst, first)
					}
				}
			}
		}
	}
}
