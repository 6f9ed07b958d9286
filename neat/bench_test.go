package neat_test

import (
	"path/filepath"
	"testing"

	"github.com/neateval/neateval/neat"
)

var mnist = neat.Input{Channels: 1, Height: 28, Width: 28}

// BenchmarkLoad reads a population of 2,000 default genomes (about 30 MB of
// weights).
func BenchmarkLoad(b *testing.B) {
	path := filepath.Join(b.TempDir(), "pop.json")
	if err := neat.Save(neat.Generate(1, 2000, mnist, 10, neat.DefaultGenConfig()), path, "pop.safetensors"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := neat.Load(path); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSave(b *testing.B) {
	pop := neat.Generate(1, 2000, mnist, 10, neat.DefaultGenConfig())
	path := filepath.Join(b.TempDir(), "pop.json")
	b.ReportAllocs()
	for b.Loop() {
		if err := neat.Save(pop, path, "pop.safetensors"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompile compiles one population of 256 default genomes.
func BenchmarkCompile(b *testing.B) {
	pop := neat.Generate(1, 256, mnist, 10, neat.DefaultGenConfig())
	b.ReportAllocs()
	for b.Loop() {
		for _, g := range pop.Genomes {
			if _, err := neat.Compile(g, pop.Input, pop.NumClasses); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkGenerate draws 256 default genomes.
func BenchmarkGenerate(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		neat.Generate(1, 256, mnist, 10, neat.DefaultGenConfig())
	}
}
