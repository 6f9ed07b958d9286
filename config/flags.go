package config

import (
	"errors"
	"flag"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// Overrides binds command-line flags to config keys, so that every command
// merges its flags over the config file the same way: a flag given on the
// command line sets its key; one not given leaves the file's value (or the
// default). A value of the wrong type is refused when the flag is parsed; a
// value out of range is refused by Load, naming the flag:
//
//	fs := flag.NewFlagSet("run", flag.ContinueOnError)
//	o := config.NewOverrides(fs)
//	o.Bind("limit", "dataset.limit", "score on the first `N` images only (dataset.limit)")
//	fs.Parse(args)
//	cfg, err := o.Load(configPath) // "" = the defaults
type Overrides struct {
	fs    *flag.FlagSet
	binds []*binding
}

type binding struct {
	flag, key string
	kind      reflect.Kind
	value     string // as given
	set       bool
}

// NewOverrides starts the bindings of fs's flags.
func NewOverrides(fs *flag.FlagSet) *Overrides { return &Overrides{fs: fs} }

// Bind declares a flag of fs that sets key. It panics on a key Config does
// not have: that is a mistake in the program, not in its input.
func (o *Overrides) Bind(name, key, usage string) {
	v, ok := Default().field(key)
	if !ok {
		panic("config: Bind: no key " + key)
	}
	b := &binding{flag: name, key: key, kind: v.Kind()}
	o.binds = append(o.binds, b)
	o.fs.Var(flagValue{b}, name, usage)
}

// Keys maps each bound flag to its key.
func (o *Overrides) Keys() map[string]string {
	m := make(map[string]string, len(o.binds))
	for _, b := range o.binds {
		m[b.flag] = b.key
	}
	return m
}

// Load reads the config file at path (Default when path is ""), sets the
// keys of the flags given, and validates the result. A value out of range
// that a flag set is a *FlagError; a rule across keys broken by merging a
// valid file and valid flags is a *FileError naming both.
func (o *Overrides) Load(path string) (*Config, error) {
	cfg := Default()
	if path != "" {
		var err error
		if cfg, err = Load(path); err != nil {
			return nil, err
		}
	}
	o.Apply(cfg)
	if err := cfg.Validate(); err != nil {
		return nil, o.blame(err, path)
	}
	return cfg, nil
}

// Apply sets the keys of the flags given in c, without validating.
func (o *Overrides) Apply(c *Config) {
	for _, b := range o.binds {
		if b.set {
			v, _ := c.field(b.key)
			setValue(v, b.value) // parsed once already by flagValue.Set
		}
	}
}

// blame says whether a flag or the file is behind a validation error.
func (o *Overrides) blame(err error, path string) error {
	var ve *ValueError
	var given []string
	for _, b := range o.binds {
		if !b.set {
			continue
		}
		if errors.As(err, &ve) && ve.Key == b.key {
			return &FlagError{Flag: b.flag, Err: err}
		}
		given = append(given, "--"+b.flag)
	}
	src := "the built-in defaults"
	if path != "" {
		src = path
	}
	if len(given) == 0 {
		return &FileError{File: src, Err: err}
	}
	sort.Strings(given)
	return &FileError{File: src + " with " + strings.Join(given, ", "), Err: err}
}

// FlagError is a flag's value that its key does not allow.
type FlagError struct {
	Flag string
	Err  error
}

func (e *FlagError) Error() string { return "flag --" + e.Flag + ": " + e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// flagValue is a bound flag as the flag package sees it.
type flagValue struct{ b *binding }

func (f flagValue) String() string {
	if f.b == nil {
		return ""
	}
	return f.b.value
}

func (f flagValue) Set(s string) error {
	field, _ := (&Config{}).field(f.b.key)
	if err := setValue(reflect.New(field.Type()).Elem(), s); err != nil { // a scratch value: Apply sets the config
		return err
	}
	f.b.value, f.b.set = s, true
	return nil
}

func (f flagValue) IsBoolFlag() bool { return f.b != nil && f.b.kind == reflect.Bool }

// errParse is what the flag package says of a number it cannot read.
var errParse = errors.New("parse error")

// setValue sets v, a config field of a scalar kind, from its command-line
// text.
func setValue(v reflect.Value, s string) error {
	if v.Type() == reflect.TypeOf(ByteSize(0)) {
		n, err := ParseByteSize(s)
		if err != nil {
			return err
		}
		v.SetInt(int64(n))
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(s, 0, v.Type().Bits())
		if err != nil {
			return errParse
		}
		v.SetInt(n)
	case reflect.Float64:
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return errParse
		}
		v.SetFloat(x)
	case reflect.Bool:
		x, err := strconv.ParseBool(s)
		if err != nil {
			return errParse
		}
		v.SetBool(x)
	default:
		return fmt.Errorf("a %s cannot be set from the command line", v.Type())
	}
	return nil
}
