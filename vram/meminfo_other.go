//go:build !linux

package vram

// hostMemory is unknown off Linux; DefaultCPUMemory falls back.
func hostMemory() (int64, bool) { return 0, false }
