//go:build linux

package neat

import (
	"io"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of a transparent huge page on amd64 and arm64.
const hugePage = 2 << 20

// readLarge is os.ReadFile for a large file read once into a buffer of its
// own (the weights): the buffer's whole 2 MiB pages are marked
// MADV_HUGEPAGE before the read, so that the kernel backs them with huge
// pages where it can. Reading 550 MB into fresh 4 KiB pages took one page
// fault per page, as much CPU as the copy on a virtual machine.
func readLarge(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	if size < 4*hugePage || int64(int(size)) != size {
		return os.ReadFile(path)
	}
	b := make([]byte, size)
	adviseHuge(b)
	n, err := io.ReadFull(f, b)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return b[:n], nil // the file shrank since Stat: what it holds now
	}
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	return b, nil
}

// adviseHuge marks the whole huge pages inside b MADV_HUGEPAGE. It is
// advice: a kernel without transparent huge pages ignores it or fails, and
// either way b reads and writes the same.
func adviseHuge(b []byte) {
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (hugePage - start%hugePage) % hugePage
	if uintptr(len(b)) <= lo+hugePage {
		return
	}
	hi := lo + (uintptr(len(b))-lo)/hugePage*hugePage
	_ = unix.Madvise(b[lo:hi], unix.MADV_HUGEPAGE)
}
