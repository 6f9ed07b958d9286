package neat

// A population of 10,000 small genomes has a safetensors header of about
// 120,000 tensors (8 MB of JSON). encoding/json takes ~5 µs a tensor to
// read it (a map of raw messages, then each entry into a struct through
// reflection): half a second, as long as reading the 550 MB file. The
// headers writers produce (this package's, Python's safetensors) are plain:
// keys without escapes, each entry exactly the three fields, integers
// without fraction or exponent. scanHeader reads that form directly; on
// anything else it gives up and the caller parses with encoding/json, which
// then also words the errors, so a header either scanner accepts gives the
// same entries.

// headerScanner reads a safetensors header of the plain form.
type headerScanner struct {
	b []byte
	i int
}

// scanHeader indexes the tensors of a plain header, hdr, whose data area
// area starts at file byte hdrEnd. ok is false when the header is not of
// the plain form, or when any entry is wrong: the caller then parses it
// with encoding/json.
func scanHeader(hdr, area []byte, hdrEnd int) (entries map[string]stEntry, ok bool) {
	s := headerScanner{b: hdr}
	if !s.byte('{') {
		return nil, false
	}
	entries = make(map[string]stEntry, len(hdr)/80)
	if s.peek('}') {
		s.i++
		return entries, s.end()
	}
	for {
		name, ok := s.str()
		if !ok || !s.byte(':') {
			return nil, false
		}
		if _, dup := entries[string(name)]; dup {
			return nil, false // encoding/json keeps the last: leave it the rules
		}
		if string(name) == "__metadata__" {
			if !s.metadata() {
				return nil, false
			}
		} else {
			e, ok := s.entry(area, hdrEnd)
			if !ok {
				return nil, false
			}
			entries[string(name)] = e
		}
		switch {
		case s.byte(','):
		case s.byte('}'):
			return entries, s.end()
		default:
			return nil, false
		}
	}
}

// entry reads {"dtype":"…","shape":[…],"data_offsets":[b,e]}, the fields
// in this order, and checks it as parseEntry does.
func (s *headerScanner) entry(area []byte, hdrEnd int) (stEntry, bool) {
	if !s.byte('{') || !s.key("dtype") {
		return stEntry{}, false
	}
	dtype, ok := s.str()
	if !ok || !s.byte(',') || !s.key("shape") {
		return stEntry{}, false
	}
	shape, ok := s.ints(nil)
	if !ok || !s.byte(',') || !s.key("data_offsets") {
		return stEntry{}, false
	}
	var offs [2]int64
	o, ok := s.ints(offs[:0])
	if !ok || !s.byte('}') || shape == nil || len(o) != 2 {
		return stEntry{}, false
	}
	e, err := checkEntry(string(dtype), shape, o[0], o[1], area, hdrEnd)
	return e, err == nil
}

// metadata skips an object of string values.
func (s *headerScanner) metadata() bool {
	if !s.byte('{') {
		return false
	}
	if s.byte('}') {
		return true
	}
	for {
		if _, ok := s.str(); !ok || !s.byte(':') {
			return false
		}
		if _, ok := s.str(); !ok {
			return false
		}
		switch {
		case s.byte(','):
		case s.byte('}'):
			return true
		default:
			return false
		}
	}
}

// key reads "name": for the given name.
func (s *headerScanner) key(name string) bool {
	k, ok := s.str()
	return ok && string(k) == name && s.byte(':')
}

// str reads a string of printable ASCII without escapes.
func (s *headerScanner) str() ([]byte, bool) {
	if !s.byte('"') {
		return nil, false
	}
	start := s.i
	for ; s.i < len(s.b); s.i++ {
		c := s.b[s.i]
		if c == '"' {
			s.i++
			return s.b[start : s.i-1], true
		}
		if c < 0x20 || c >= 0x7f || c == '\\' {
			return nil, false
		}
	}
	return nil, false
}

// ints reads an array of non-negative integers (no sign, fraction or
// exponent; at most 18 digits) appended to dst; an empty array is a non-nil
// empty slice.
func (s *headerScanner) ints(dst []int64) ([]int64, bool) {
	if !s.byte('[') {
		return nil, false
	}
	if dst == nil {
		dst = make([]int64, 0, 4)
	}
	if s.byte(']') {
		return dst, true
	}
	for {
		s.space()
		start, v := s.i, int64(0)
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			v = v*10 + int64(s.b[s.i]-'0')
			s.i++
		}
		n := s.i - start
		if n == 0 || n > 18 || (n > 1 && s.b[start] == '0') {
			return nil, false
		}
		dst = append(dst, v)
		switch {
		case s.byte(','):
		case s.byte(']'):
			return dst, true
		default:
			return nil, false
		}
	}
}

// byte skips white space and then c, reporting whether c was there.
func (s *headerScanner) byte(c byte) bool {
	if s.peek(c) {
		s.i++
		return true
	}
	return false
}

// peek skips white space and reports whether c is next.
func (s *headerScanner) peek(c byte) bool {
	s.space()
	return s.i < len(s.b) && s.b[s.i] == c
}

func (s *headerScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// end reports whether only white space is left.
func (s *headerScanner) end() bool {
	s.space()
	return s.i == len(s.b)
}
