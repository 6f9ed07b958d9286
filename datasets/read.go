package datasets

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"slices"
)

// hintRatio caps the first buffer for a gzip body at this many times the
// compressed size (MNIST's images expand about 5×), so that a forged gzip
// trailer cannot make it large; past it, memory follows the data actually
// decompressed.
const hintRatio = 16

// maxBody is the largest body any header may declare (1 TiB, less on 32-bit
// machines): larger claims are reported as such, not compared with the file.
const maxBody = min(1<<40, math.MaxInt)

// isGzip reports whether data starts with the gzip magic number.
func isGzip(data []byte) bool {
	return len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b
}

// source is the content of one data file, raw or gzipped, that a decoder
// reads in two steps: a fixed-size header, then a body whose size the header
// gives. Memory follows the bytes the file really holds, never what its
// header claims.
type source struct {
	name string // the file, for errors
	raw  []byte // the file as stored
	gz   *gzip.Reader
	off  uint64 // bytes of content consumed so far
}

func newSource(name string, raw []byte) (*source, error) {
	s := &source{name: name, raw: raw}
	if isGzip(raw) {
		z, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, s.gzipErr(err)
		}
		s.gz = z
	}
	return s, nil
}

func (s *source) gzipErr(err error) error {
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return fmt.Errorf("datasets: %s: %w: %w: the compressed stream ends early", s.name, ErrGzip, ErrTruncated)
	}
	return fmt.Errorf("datasets: %s: %w: %w", s.name, ErrGzip, err)
}

// unit says how the content is measured in errors.
func (s *source) unit() string {
	if s.gz != nil {
		return "decompressed bytes"
	}
	return "bytes"
}

// header reads the next n bytes of content; a shorter file is ErrTruncated.
func (s *source) header(n int) ([]byte, error) {
	var h []byte
	if s.gz == nil {
		rest := s.raw[min(s.off, uint64(len(s.raw))):]
		h = rest[:min(n, len(rest))]
	} else {
		var err error
		if h, err = readAtMost(s.gz, uint64(n), uint64(n)); err != nil {
			return nil, s.gzipErr(err)
		}
	}
	if len(h) < n {
		return nil, fmt.Errorf("datasets: %s: %w: the header needs %d %s, the file has %d",
			s.name, ErrTruncated, s.off+uint64(n), s.unit(), s.off+uint64(len(h)))
	}
	s.off += uint64(n)
	return h, nil
}

// body reads the rest of the content, which must be exactly size bytes; desc
// says what those bytes are ("10000 images of 28×28"). A raw file's body is a
// slice of it, not a copy. A size that overflowed (ok false) or is beyond
// maxBody is reported without reading.
func (s *source) body(size uint64, ok bool, desc string) ([]byte, error) {
	if !ok || size > maxBody {
		return nil, fmt.Errorf("datasets: %s: %w: the header declares %s, more than any file holds",
			s.name, ErrTruncated, desc)
	}
	want := s.off + size
	fail := func(err error, got uint64) error {
		return fmt.Errorf("datasets: %s: %w: expected %d %s (%d-byte header + %s), got %d",
			s.name, err, want, s.unit(), s.off, desc, got)
	}
	if s.gz == nil {
		switch have := uint64(len(s.raw)); {
		case have < want:
			return nil, fail(ErrTruncated, have)
		case have > want:
			return nil, fail(ErrTrailing, have)
		}
		return s.raw[s.off:], nil
	}
	buf, err := readAtMost(s.gz, size, s.hint(size))
	if err != nil {
		return nil, s.gzipErr(err)
	}
	if got := uint64(len(buf)); got < size {
		return nil, fail(ErrTruncated, s.off+got)
	}
	// The stream must end here; reading it to the end also checks its CRC.
	extra, err := io.Copy(io.Discard, s.gz)
	if err != nil {
		return nil, s.gzipErr(err)
	}
	if extra > 0 {
		return nil, fail(ErrTrailing, want+uint64(extra))
	}
	return buf, nil
}

// hint is the first capacity for a gzip body of size bytes: the size that
// the gzip trailer records (content modulo 2^32, less the header), capped at
// hintRatio times the compressed size.
func (s *source) hint(size uint64) uint64 {
	h := min(size, uint64(len(s.raw))*hintRatio+4096)
	if n := len(s.raw); n >= 4 {
		if isize := uint64(binary.LittleEndian.Uint32(s.raw[n-4:])); isize >= s.off {
			h = min(h, isize-s.off)
		}
	}
	return h
}

// readAtMost reads from r until it has size bytes or r ends (io.EOF, which
// is not an error here), starting with capacity hint and at least doubling it
// as data arrives, so memory follows the data read rather than size.
func readAtMost(r io.Reader, size, hint uint64) ([]byte, error) {
	buf := make([]byte, 0, min(hint, size))
	for uint64(len(buf)) < size {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, int(min(uint64(max(cap(buf), 4096)), size-uint64(len(buf)))))
		}
		end := int(min(uint64(cap(buf)), size))
		n, err := r.Read(buf[len(buf):end])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// mul multiplies sizes, reporting false on overflow.
func mul(xs ...uint64) (uint64, bool) {
	p := uint64(1)
	for _, x := range xs {
		hi, lo := bits.Mul64(p, x)
		if hi != 0 {
			return 0, false
		}
		p = lo
	}
	return p, true
}

// readFile reads a whole file; its size bounds the memory used.
func readFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("datasets: %w", err)
	}
	return data, nil
}
