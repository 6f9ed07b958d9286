package config

import (
	"strings"
	"testing"
)

func TestParseByteSize(t *testing.T) {
	tests := []struct {
		in   string
		want ByteSize
		err  string // substring of the error; "" = no error
	}{
		{"0", 0, ""},
		{"1024", 1024, ""},
		{"512MiB", 512 << 20, ""},
		{"16GiB", 16 << 30, ""},
		{"16 GiB", 16 << 30, ""},
		{" 2GB ", 2_000_000_000, ""},
		{"2gb", 2_000_000_000, ""},
		{"3KB", 3000, ""},
		{"3kib", 3072, ""},
		{"1TiB", 1 << 40, ""},
		{"5TB", 5e12, ""},
		{"100B", 100, ""},
		{"1.5GiB", 1536 << 20, ""},
		{"0.5KB", 500, ""},
		{"8EiB", 0, "want a number"},
		{"", 0, "empty"},
		{"GiB", 0, "want a number"},
		{"-1", 0, "must be ≥ 0"},
		{"-1GiB", 0, "must be ≥ 0"},
		{"+1GiB", 0, "want a number"},
		{"1e3", 1000, ""},
		{"0x10", 0, "want a number"},
		{"1_000", 0, "want a number"},
		{"NaN", 0, "want a number"},
		{"inf GB", 0, "want a number"},
		{"16 GB of RAM", 0, "want a number"},
		{"9999999TiB", 0, "too large"},
		{"9223372036854775807", 9223372036854775807, ""},
		{"9223372036854775808", 0, "too large"},
	}
	for _, tt := range tests {
		got, err := ParseByteSize(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseByteSize(%q) = %d, %v; want error containing %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestByteSizeString(t *testing.T) {
	tests := []struct {
		in   ByteSize
		want string
	}{
		{0, "0"}, {1, "1"}, {1024, "1KiB"}, {1000, "1KB"}, {16 << 30, "16GiB"},
		{2_000_000_000, "2GB"}, {1536 << 20, "1536MiB"}, {1000001, "1000001"},
	}
	for _, tt := range tests {
		if got := tt.in.String(); got != tt.want {
			t.Errorf("ByteSize(%d).String() = %q, want %q", int64(tt.in), got, tt.want)
		}
		back, err := ParseByteSize(tt.want)
		if err != nil || back != tt.in {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d", tt.want, back, err, int64(tt.in))
		}
	}
}

func TestByteSizeUnmarshalTOML(t *testing.T) {
	var b ByteSize
	for _, v := range []any{int64(7), "7B"} {
		if err := b.UnmarshalTOML(v); err != nil || b != 7 {
			t.Errorf("UnmarshalTOML(%#v) = %d, %v", v, b, err)
		}
	}
	for _, v := range []any{int64(-1), 1.5, true, []any{int64(1)}, nil} {
		if err := b.UnmarshalTOML(v); err == nil {
			t.Errorf("UnmarshalTOML(%#v) accepted", v)
		}
	}
	if err := b.UnmarshalText([]byte("16GiB")); err != nil || b != 16<<30 {
		t.Errorf("UnmarshalText = %d, %v", b, err)
	}
}
