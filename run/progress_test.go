package run

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock for the bar's rate and ETA.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// syncBuffer is a bytes.Buffer safe for the bar's ticker.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func TestProgressLine(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	p := NewProgressBar(&syncBuffer{}, "off")
	p.now = clk.now
	p.Start(64, 0)
	if got := p.line(0); got != " 0/64 genomes [....................]   0.0%  -- img·genomes/s  ETA --" {
		t.Errorf("start: %q", got)
	}
	p.Add(16, 16*10000)
	// 16 of 64 in 10 s: 16000 images·genomes/s, 48 left at 1.6 genomes/s = 30 s.
	if got := p.line(10 * time.Second); got != "16/64 genomes [#####...............]  25.0%  16k img·genomes/s  ETA 0:30" {
		t.Errorf("quarter: %q", got)
	}
	p.Add(48, 48*10000)
	if got := p.line(40 * time.Second); got != "64/64 genomes [####################] 100.0%  16k img·genomes/s  ETA 0:00" {
		t.Errorf("done: %q", got)
	}
	// A resumed run: the genomes already done count toward the bar but not
	// toward the rate and the ETA.
	p.Start(100, 90)
	p.Add(5, 5000)
	if got := p.line(5 * time.Second); got != " 95/100 genomes [###################.]  95.0%  1k img·genomes/s  ETA 0:05" {
		t.Errorf("resumed: %q", got)
	}
}

func TestProgressDisabledWritesNothing(t *testing.T) {
	var buf syncBuffer
	for _, mode := range []string{"off", "auto"} { // a buffer is not a terminal
		p := NewProgressBar(&buf, mode)
		p.Start(10, 0)
		p.Add(10, 100)
		p.Writer().Write([]byte("log line\n"))
		p.Finish()
		if p.Done() != 10 {
			t.Errorf("%s: Done = %d", mode, p.Done())
		}
	}
	if got := buf.String(); got != "log line\nlog line\n" {
		t.Errorf("disabled bar wrote %q", got)
	}
}

func TestProgressLogLinesClearTheBar(t *testing.T) {
	var buf syncBuffer
	clk := &fakeClock{t: time.Unix(1000, 0)}
	p := NewProgressBar(&buf, "on")
	p.now = clk.now
	p.Start(2, 0)
	p.Writer().Write([]byte("a log line\n"))
	clk.advance(time.Second)
	p.Add(1, 10)
	p.Finish()
	out := buf.String()
	const clear = "\r\x1b[K"
	// The bar, cleared, the log line alone, the bar again, its update, and
	// the final clear.
	want := clear + "0/2 genomes [....................]   0.0%  -- img·genomes/s  ETA --" +
		clear + "a log line\n" +
		clear + "0/2 genomes [....................]   0.0%  -- img·genomes/s  ETA --" +
		clear + "1/2 genomes [##########..........]  50.0%  10 img·genomes/s  ETA 0:01" +
		clear
	if out != want {
		t.Errorf("output\n got %q\nwant %q", out, want)
	}
	for _, line := range strings.Split(out, "\n") {
		if i := strings.Index(line, "a log line"); i > 0 && !strings.HasSuffix(line[:i], clear) {
			t.Errorf("log line shares its line with the bar: %q", line)
		}
	}
}

func TestProgressConcurrentAdd(t *testing.T) {
	var buf syncBuffer
	p := NewProgressBar(&buf, "on")
	p.Start(800, 0)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				p.Add(1, 10)
				if i%10 == 0 {
					p.Writer().Write([]byte("log\n"))
				}
			}
		}()
	}
	wg.Wait()
	p.Finish()
	p.Finish() // twice is fine
	if p.Done() != 800 {
		t.Errorf("Done = %d, want 800", p.Done())
	}
	if !strings.HasSuffix(buf.String(), "\r\x1b[K") {
		t.Error("Finish did not clear the line")
	}
	if strings.Count(buf.String(), "log\n") != 80 {
		t.Error("log lines lost")
	}
}

func TestClockAndSI(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0:00", 1500 * time.Millisecond: "0:02", 61 * time.Second: "1:01", 3725 * time.Second: "1:02:05"} {
		if got := clock(d); got != want {
			t.Errorf("clock(%v) = %q, want %q", d, got, want)
		}
	}
	for x, want := range map[float64]string{0: "0", 999: "999", 1234: "1.23k", 2.5e6: "2.5M", 7.77e9: "7.77G"} {
		if got := SI(x); got != want {
			t.Errorf("SI(%v) = %q, want %q", x, got, want)
		}
	}
}
