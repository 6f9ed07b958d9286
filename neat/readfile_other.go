//go:build !linux

package neat

import "os"

// readLarge is os.ReadFile; on Linux it asks for huge pages first.
func readLarge(path string) ([]byte, error) { return os.ReadFile(path) }

// hugePage is the size a test's files are chosen around.
const hugePage = 2 << 20
