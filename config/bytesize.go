package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ByteSize is a number of bytes in the config. In TOML it is either an
// integer (bytes) or a string with a unit: "512MiB", "16 GiB", "2GB", "1.5GiB".
// KB, MB, GB, TB are decimal (10³ⁿ); KiB, MiB, GiB, TiB are binary (2¹⁰ⁿ);
// units are case-insensitive. Negative sizes are rejected.
type ByteSize int64

var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	// Longest suffixes first, so "KiB" is not read as "B".
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"b", 1},
}

// ParseByteSize reads a size such as "16GiB", "512 MiB", "2GB" or "1024".
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("invalid size %q: empty (want e.g. 0, 1048576, \"512MiB\", \"16GiB\", \"2GB\")", s)
	}
	num, mult := t, int64(1)
	lower := strings.ToLower(t)
	for _, u := range sizeUnits {
		if strings.HasSuffix(lower, u.suffix) {
			num, mult = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.mult
			break
		}
	}
	if num == "" || strings.HasPrefix(num, "+") {
		return 0, fmt.Errorf("invalid size %q: want a number followed by an optional unit (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)", s)
	}
	if n, err := strconv.ParseInt(num, 10, 64); err == nil {
		if n < 0 {
			return 0, fmt.Errorf("invalid size %q: must be ≥ 0", s)
		}
		if n > math.MaxInt64/mult {
			return 0, fmt.Errorf("invalid size %q: too large", s)
		}
		return ByteSize(n * mult), nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || strings.ContainsAny(num, "xXpP_") {
		return 0, fmt.Errorf("invalid size %q: want a number followed by an optional unit (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)", s)
	}
	if f < 0 {
		return 0, fmt.Errorf("invalid size %q: must be ≥ 0", s)
	}
	v := f * float64(mult)
	if v >= math.MaxInt64 {
		return 0, fmt.Errorf("invalid size %q: too large", s)
	}
	return ByteSize(v), nil
}

// UnmarshalTOML implements toml.Unmarshaler: an integer is bytes, a string is
// parsed by ParseByteSize. The toml package adds the key and line to errors.
func (b *ByteSize) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case int64:
		if x < 0 {
			return fmt.Errorf("invalid size %d: must be ≥ 0", x)
		}
		*b = ByteSize(x)
		return nil
	case string:
		n, err := ParseByteSize(x)
		if err != nil {
			return err
		}
		*b = n
		return nil
	}
	return fmt.Errorf("invalid size %v: want an integer number of bytes or a string such as \"16GiB\", \"512MiB\", \"2GB\"", v)
}

// UnmarshalText implements encoding.TextUnmarshaler (for flags).
func (b *ByteSize) UnmarshalText(text []byte) error {
	n, err := ParseByteSize(string(text))
	if err != nil {
		return err
	}
	*b = n
	return nil
}

// MarshalText writes the size in the form String gives.
func (b ByteSize) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// String writes the size exactly: with the largest binary or decimal unit
// that divides it ("16GiB", "2GB"), else in bytes ("1000001").
func (b ByteSize) String() string {
	n := int64(b)
	if n == 0 {
		return "0"
	}
	for _, u := range []struct {
		name string
		mult int64
	}{{"TiB", 1 << 40}, {"TB", 1e12}, {"GiB", 1 << 30}, {"GB", 1e9}, {"MiB", 1 << 20}, {"MB", 1e6}, {"KiB", 1 << 10}, {"KB", 1e3}} {
		if n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}
