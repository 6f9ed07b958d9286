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
// one, by the assembly (act_amd64.s). They are accurate to a few ulp.

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
	tanhT  = 0.625 // below: odd polynomial (Cephes tanhf); above: via e^-2|x|
	tanhP0 = -5.70498872745e-3
	tanhP1 = 2.06390887954e-2
	tanhP2 = -5.37397155531e-2
	tanhP3 = 1.33314422036e-1
	tanhP4 = -3.33332819422e-1
	sqrt12 = 0.70710678118654752 // 1/√2
	// erfc(z) ≈ t·e^(-z² + P(t)), t = 1/(1+z/2), relative error < 1.2e-7
	// for z ≥ 0 (Numerical Recipes' erfcc, a Chebyshev fit).
	erfE0 = -1.26551223
	erfE1 = 1.00002368
	erfE2 = 0.37409196
	erfE3 = 0.09678418
	erfE4 = -0.18628806
	erfE5 = 0.27886807
	erfE6 = -1.13520398
	erfE7 = 1.48851587
	erfE8 = -0.82215223
	erfE9 = 0.17087277
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

func tanhf(x float32) float32 {
	a := absf(x)
	if a < tanhT {
		z := x * x
		p := float32(tanhP0)
		p = p*z + tanhP1
		p = p*z + tanhP2
		p = p*z + tanhP3
		p = p*z + tanhP4
		return p*z*x + x
	}
	e := expf(-2 * a)
	t := (1 - e) / (1 + e)
	return math.Float32frombits(math.Float32bits(t) | math.Float32bits(x)&(1<<31))
}

func sigmoidf(x float32) float32 {
	e := expf(-absf(x))
	s := 1 / (1 + e)
	if x >= 0 {
		return s
	}
	return e * s
}

func geluf(x float32) float32 {
	u := x * sqrt12
	a := absf(u)
	t := 1 / (1 + 0.5*a)
	p := float32(erfE9)
	p = p*t + erfE8
	p = p*t + erfE7
	p = p*t + erfE6
	p = p*t + erfE5
	p = p*t + erfE4
	p = p*t + erfE3
	p = p*t + erfE2
	p = p*t + erfE1
	p = p*t + erfE0
	e := t * expf(p-a*a) // erfc(|u|)
	if u >= 0 {
		return 0.5 * x * (2 - e)
	}
	return 0.5 * x * e
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
