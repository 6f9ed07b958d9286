//go:build linux

package vram

import (
	"bufio"
	"strings"
	"testing"
)

func TestParseMemTotal(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"MemTotal:       24588884 kB\nMemFree:        23000000 kB\n", 24588884 << 10, true},
		{"MemFree: 1 kB\nMemTotal: 2048 kB\n", 2048 << 10, true},
		{"MemTotal: 2048 MB\n", 0, false},
		{"MemTotal: -5 kB\n", 0, false},
		{"MemTotal: lots kB\n", 0, false},
		{"MemTotal:\n", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseMemTotal(bufio.NewScanner(strings.NewReader(tt.in)))
		if got != tt.want || ok != tt.ok {
			t.Errorf("%q: %d %v, want %d %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	if n, ok := hostMemory(); !ok || n < 1<<20 {
		t.Errorf("hostMemory: %d %v", n, ok)
	}
}

func FuzzParseMemTotal(f *testing.F) {
	f.Add("MemTotal:       24588884 kB\n")
	f.Add("MemTotal: 99999999999999999999 kB\n")
	f.Add("MemTotal:\t1\tkB")
	f.Fuzz(func(t *testing.T, in string) {
		n, ok := parseMemTotal(bufio.NewScanner(strings.NewReader(in)))
		if ok != (n > 0) {
			t.Fatalf("%q: %d %v", in, n, ok)
		}
	})
}
