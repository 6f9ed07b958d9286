package config

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// eval.device, from the file or from a flag, is the device index the
// backend is opened with.
func TestDeviceIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.toml")
	if err := os.WriteFile(path, []byte("[eval]\nbackend = \"cuda\"\ndevice = 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"default", nil, 0},
		{"from the file", []string{"-config", path}, 2},
		{"a flag over the file", []string{"-config", path, "-device", "5"}, 5},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("worker", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		cfgPath := fs.String("config", "", "")
		ov := NewOverrides(fs)
		ov.Bind("device", "eval.device", "")
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		cfg, err := ov.Load(*cfgPath)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		o, err := cfg.BackendOptions(nil)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Eval.Device != tt.want || o.DeviceIndex != tt.want {
			t.Errorf("%s: eval.device %d, BackendOptions.DeviceIndex %d, want %d", tt.name, cfg.Eval.Device, o.DeviceIndex, tt.want)
		}
	}
}
