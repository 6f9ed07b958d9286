package kernels

import "math"

// Act is an activation function, applied elementwise after the bias.
type Act uint8

// The activations of the population format. Their numeric values are part of
// the assembly kernels' calling convention (Identity, ReLU and LeakyReLU are
// applied inside the matrix-product epilogue); do not reorder them.
const (
	Identity  Act = iota // x
	ReLU                 // max(x, 0); NaN stays NaN
	LeakyReLU            // x for x ≥ 0, 0.01·x otherwise
	Tanh                 // tanh(x)
	Sigmoid              // 1 / (1 + e^-x)
	GELU                 // x · ½ · (1 + erf(x/√2)), the exact erf form
)

// LeakySlope is the negative slope of LeakyReLU.
const LeakySlope = 0.01

var actNames = [...]string{"identity", "relu", "leaky_relu", "tanh", "sigmoid", "gelu"}

// String returns the activation's name as the population format writes it.
func (a Act) String() string {
	if int(a) < len(actNames) {
		return actNames[a]
	}
	return "Act(" + itoa(int(a)) + ")"
}

// Valid reports whether a is one of the defined activations.
func (a Act) Valid() bool { return a <= GELU }

// epilogueAct is the activation code the matrix-product micro-kernels apply
// themselves: the piecewise-linear ones. The others are applied by a vector
// pass over the freshly written output (see applyAfter).
func epilogueAct(a Act) int {
	if a == ReLU || a == LeakyReLU {
		return int(a)
	}
	return 0
}

// applyAfter reports whether a needs a separate vector pass after the
// micro-kernels have stored their tiles.
func applyAfter(a Act) bool { return a >= Tanh }

// Apply applies act to every element of x in place, with the selected kernel
// path. Identity does nothing.
func Apply(act Act, x []float32) {
	if !act.Valid() {
		panic("kernels: Apply: invalid activation " + act.String())
	}
	if act == Identity || len(x) == 0 {
		return
	}
	applyVec(selected(), act, x)
}

// applyGo is the pure-Go twin of the vector activation kernels: the same
// float32 algorithms, one element at a time.
func applyGo(act Act, x []float32) {
	switch act {
	case ReLU:
		for i, v := range x {
			if v < 0 {
				x[i] = 0
			}
		}
	case LeakyReLU:
		for i, v := range x {
			if v < 0 {
				x[i] = v * LeakySlope
			}
		}
	case Tanh:
		for i, v := range x {
			x[i] = tanhf(v)
		}
	case Sigmoid:
		for i, v := range x {
			x[i] = sigmoidf(v)
		}
	case GELU:
		for i, v := range x {
			x[i] = geluf(v)
		}
	}
}

// The float32 algorithms below are shared by the pure-Go path and, one for
// one, by the assembly (vec_amd64.s, from gen_vec.go). Measured over every
// float32 (AVX-512): tanh within 5.3 ulp, sigmoid 2.9 ulp, GELU 2.9 ulp for
// x ≥ 0 and 9e-7 absolute for x < 0, where 1 + erf cancels as in PyTorch's
// formula. Tanh and sigmoid take a polynomial below |x| = 0.625 and 1.25,
// lane by lane; AVX-512 skips the other formula for a pair of vectors all
// below, the common case (bias-valued outputs over blank backgrounds).

const (
	expLo  = -87.0 // e^x is flushed to e^-87 below this (2^n stays normal)
	log2e  = 1.44269504088896341
	ln2Hi  = 0.693359375 // ln 2 split so that n·ln2Hi is exact
	ln2Lo  = -2.12194440e-4
	expC0  = 1.9875691500e-4 // Cephes expf polynomial on [-ln2/2, ln2/2]
	expC1  = 1.3981999507e-3
	expC2  = 8.3334519073e-3
	expC3  = 4.1665795894e-2
	expC4  = 1.6666665459e-1
	expC5  = 5.0000001201e-1
	tanhT  = 0.625 // below: odd polynomial (Cephes tanhf); above: rational
	tanhP0 = -5.70498872745e-3
	tanhP1 = 2.06390887954e-2
	tanhP2 = -5.37397155531e-2
	tanhP3 = 1.33314422036e-1
	tanhP4 = -3.33332819422e-1
	sigT   = 1.25 // sigmoid below: (1 + tanh(x/2))/2 by that polynomial
	// tanh(x) ≈ x·N(x²)/D(x²) for |x| ≥ 0.625, x clamped to ±tanhC, and
	// erf(x/√2) ≈ x·P(x²)/Q(x²), x clamped to ±geluC and the quotient to
	// ±1: rational fits of least maximum relative error, on [0, 9.5]
	// (1.6e-8) and [0, 5.5] (2.7e-8), by bench/actfit.py. Beyond 5.5 erf's
	// quotient passes 1, so GELU is x or +0 there. gen_vec.go holds the
	// same values.
	tanhC = 9.5
	geluC = 6.0
)

var (
	tanhN = [...]float32{0.99999998416133044, 0.1306568451839546, 0.0030834705020270355, 1.0939337631967857e-5, -1.9348366637102077e-8, 4.8537125262736748e-11, -7.397757038199901e-14}
	tanhD = [...]float32{1, 0.46399007541023855, 0.024413646845264383, 0.00025162761266952777}
	erfP  = [...]float32{0.79788453946901812, 0.067136070483738808, 0.0093164116339541018, 0.00033134936838160184, 1.2614610735250856e-5, 4.5666452974740026e-8}
	erfQ  = [...]float32{1, 0.25080894862740611, 0.028478645325359421, 0.0018669224179006649, 7.2509630573196041e-5, 1.1965997363208636e-6}
)

// expf returns e^x for x ≤ ~88, flushing x below -87 to -87. NaN stays NaN.
func expf(x float32) float32 {
	if x < expLo {
		x = expLo
	}
	n := float32(math.RoundToEven(float64(x * log2e)))
	r := x - n*ln2Hi
	r -= n * ln2Lo
	p := float32(expC0)
	p = p*r + expC1
	p = p*r + expC2
	p = p*r + expC3
	p = p*r + expC4
	p = p*r + expC5
	y := p*(r*r) + r + 1
	return y * math.Float32frombits(uint32(int32(n)+127)<<23)
}

func absf(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// tanhPoly is tanh for |x| < 0.625: Cephes' odd polynomial.
func tanhPoly(x float32) float32 {
	z := x * x
	p := float32(tanhP0)
	p = p*z + tanhP1
	p = p*z + tanhP2
	p = p*z + tanhP3
	p = p*z + tanhP4
	return p*z*x + x
}

// fma32 is a·b + c rounded once to float32 (to float64 first, a double
// rounding that differs from the assembly's single one in rare ties).
func fma32(a, b, c float32) float32 {
	return float32(math.FMA(float64(a), float64(b), float64(c)))
}

// horner evaluates c[0] + c[1]·z + … by Horner's rule with fused
// multiply-adds, as the assembly does.
func horner(c []float32, z float32) float32 {
	p := c[len(c)-1]
	for i := len(c) - 2; i >= 0; i-- {
		p = fma32(p, z, c[i])
	}
	return p
}

// rational returns x·num(x²)/den(x²), as the assembly computes it.
func rational(num, den []float32, x float32) float32 {
	z := x * x
	return horner(num, z) * x / horner(den, z)
}

// clampf returns x limited to ±c; NaN stays NaN.
func clampf(x, c float32) float32 {
	if x > c {
		return c
	}
	if x < -c {
		return -c
	}
	return x
}

func tanhf(x float32) float32 {
	if absf(x) < tanhT {
		return tanhPoly(x)
	}
	return rational(tanhN[:], tanhD[:], clampf(x, tanhC))
}

func sigmoidf(x float32) float32 {
	if absf(x) < sigT {
		return (tanhPoly(x*0.5) + 1) * 0.5
	}
	e := expf(-absf(x))
	s := 1 / (1 + e)
	if x >= 0 {
		return s
	}
	return e * s
}

func geluf(x float32) float32 {
	e := clampf(rational(erfP[:], erfQ[:], clampf(x, geluC)), 1) // erf(x/√2)
	h := 0.5 * x
	return fma32(h, e, h)
}

func itoa(v int) string {
	if v == 0 {
		return "0"
	}
	neg := v < 0
	if neg {
		v = -v
	}
	var b [20]byte
	i := len(b)
	for v > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
