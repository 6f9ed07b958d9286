//go:build linux

package vram

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// hostMemory reads MemTotal from /proc/meminfo.
func hostMemory() (int64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	return parseMemTotal(bufio.NewScanner(f))
}

// parseMemTotal finds "MemTotal: <n> kB".
func parseMemTotal(sc *bufio.Scanner) (int64, bool) {
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, false
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || kb <= 0 || kb > 1<<43 {
			return 0, false
		}
		return kb << 10, true
	}
	return 0, false
}
