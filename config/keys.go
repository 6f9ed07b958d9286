package config

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// checkKeys refuses keys that the config does not have, by name, with the
// nearest known key as a suggestion. toml matches struct fields without
// regard to case, so a key decoded under another spelling is refused too.
func checkKeys(md toml.MetaData) error {
	const maxReported = 3
	known := knownKeys()
	var msgs []string
	more := 0
	reported := map[string]bool{}
	bad := func(k string) {
		// A key under an unknown table is covered by the table's message.
		for i := range len(k) {
			if k[i] == '.' && reported[k[:i]] {
				return
			}
		}
		reported[k] = true
		if len(msgs) == maxReported {
			more++
			return
		}
		m := fmt.Sprintf("unknown key %q", k)
		if s := suggestKey(k, known); s != "" {
			m += fmt.Sprintf(" (did you mean %q?)", s)
		}
		msgs = append(msgs, m)
	}
	for _, k := range md.Undecoded() {
		bad(k.String())
	}
	for _, k := range md.Keys() {
		if ks := k.String(); !known[ks] && !reported[ks] {
			bad(ks)
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	if more > 0 {
		msgs = append(msgs, fmt.Sprintf("and %d more unknown keys", more))
	}
	return errors.New(strings.Join(msgs, "; "))
}

// knownKeys is every table and key of Config, as toml writes them:
// "eval", "eval.eval_batch_size", ...
func knownKeys() map[string]bool {
	keys := map[string]bool{}
	for _, k := range Keys() {
		keys[k] = true
		if i := strings.IndexByte(k, '.'); i > 0 {
			keys[k[:i]] = true
		}
	}
	return keys
}

// Keys lists the leaf keys of Config in declaration order:
// "population.path", …, "evolve.generations", ….
func Keys() []string {
	var keys []string
	ct := reflect.TypeOf(Config{})
	for i := range ct.NumField() {
		sec := ct.Field(i)
		for _, k := range fieldKeys(sec.Type) {
			keys = append(keys, sec.Tag.Get("toml")+"."+k)
		}
	}
	return keys
}

// fieldKeys lists the toml keys of a section's struct type, the fields of
// an embedded struct (the [evolve] table's neat.EvolveConfig) in its place.
func fieldKeys(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			keys = append(keys, fieldKeys(f.Type)...)
			continue
		}
		keys = append(keys, f.Tag.Get("toml"))
	}
	return keys
}

// field is the field of c that key ("section.key") names.
func (c *Config) field(key string) (reflect.Value, bool) {
	sec, name, ok := strings.Cut(key, ".")
	if !ok {
		return reflect.Value{}, false
	}
	v := reflect.ValueOf(c).Elem()
	for i := range v.NumField() {
		if v.Type().Field(i).Tag.Get("toml") == sec {
			return structField(v.Field(i), name)
		}
	}
	return reflect.Value{}, false
}

func structField(v reflect.Value, name string) (reflect.Value, bool) {
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			if fv, ok := structField(v.Field(i), name); ok {
				return fv, true
			}
			continue
		}
		if f.Tag.Get("toml") == name {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

// suggestKey returns the known key nearest to k, or "" if none is close:
// the same name in another table, a spelling differing only in case, or
// one within a small edit distance.
func suggestKey(k string, known map[string]bool) string {
	if len(k) > 100 { // no key is this long
		return ""
	}
	cands := make([]string, 0, len(known))
	for c := range known {
		cands = append(cands, c)
	}
	sort.Strings(cands)
	last := k[strings.LastIndexByte(k, '.')+1:]
	for _, c := range cands {
		if strings.EqualFold(c, k) {
			return c
		}
	}
	best, bestD := "", 1<<30
	for _, c := range cands {
		if strings.Contains(c, ".") && c[strings.LastIndexByte(c, '.')+1:] == last {
			return c
		}
		if d := editDistance(strings.ToLower(k), c); d < bestD {
			best, bestD = c, d
		}
	}
	if limit := max(2, len(k)/5); bestD <= limit {
		return best
	}
	// A key in the right table but misspelled beyond the limit: compare the
	// last parts alone.
	best, bestD = "", 1<<30
	for _, c := range cands {
		if i := strings.LastIndexByte(c, '.'); i > 0 {
			if d := editDistance(strings.ToLower(last), c[i+1:]); d < bestD {
				best, bestD = c, d
			}
		}
	}
	if bestD <= max(2, len(last)/4) {
		return best
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b, by bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
