package run

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// ProgressBar is a Progress drawn on a terminal: one line on stderr,
// redrawn in place with \r, showing genomes done of the total, the throughput in
// images·genomes per second and the time left:
//
//	12/64 genomes [####................]  18.8%  1.23M img·genomes/s  ETA 0:42
//
// It draws only when enabled (mode "on", or "auto" and stderr is a
// terminal: output.progress); otherwise every method is a cheap no-op apart from counting.
// Lines are redrawn at most every redrawEvery, from Add and from a ticker.
// Log lines must go through Writer, which clears the bar before a line and
// redraws it after, so logs and the bar never share a line. All methods are
// safe for concurrent use.
type ProgressBar struct {
	mu       sync.Mutex
	w        io.Writer
	enabled  bool
	running  bool
	total    int
	done     int   // genomes with a result, including those resumed
	resumed  int   // done at Start, not counted in the rate
	images   int64 // images·genomes since Start
	start    time.Time
	lastDraw time.Time
	onScreen bool // the bar's line is on the terminal now
	stop     chan struct{}
	ticker   sync.WaitGroup
	now      func() time.Time
}

// redrawEvery is the shortest time between two redraws.
const redrawEvery = 100 * time.Millisecond

// NewProgressBar returns the bar for mode "auto" (draw when w is a terminal),
// "on" (always draw) or "off" (never).
func NewProgressBar(w io.Writer, mode string) *ProgressBar {
	return &ProgressBar{
		w:       w,
		enabled: mode == "on" || (mode == "auto" && IsTerminal(w)),
		now:     time.Now,
	}
}

// Start begins a run of total genomes of which done already have results
// (a resumed run).
func (p *ProgressBar) Start(total, done int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total, p.done, p.resumed, p.images = total, done, done, 0
	p.start = p.now()
	p.running = true
	if !p.enabled {
		return
	}
	p.drawLocked()
	p.stop = make(chan struct{})
	p.ticker.Add(1)
	go p.tick(p.stop)
}

func (p *ProgressBar) tick(stop chan struct{}) {
	defer p.ticker.Done()
	t := time.NewTicker(4 * redrawEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			p.mu.Lock()
			if p.running {
				p.drawLocked()
			}
			p.mu.Unlock()
		}
	}
}

// Add counts genomes newly scored and the images they saw in total.
func (p *ProgressBar) Add(genomes int, images int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += genomes
	p.images += images
	if p.enabled && p.running && (p.done >= p.total || p.now().Sub(p.lastDraw) >= redrawEvery) {
		p.drawLocked()
	}
}

// Done returns the genomes counted so far (resumed ones included).
func (p *ProgressBar) Done() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.done
}

// Finish stops the bar and clears its line. It may be called more than once.
func (p *ProgressBar) Finish() {
	p.mu.Lock()
	stop := p.stop
	p.stop = nil
	p.running = false
	p.clearLocked()
	p.mu.Unlock()
	if stop != nil {
		close(stop)
		p.ticker.Wait()
	}
}

// Writer returns the writer logs must use while the bar may be drawn: every
// write clears the bar's line first and redraws the bar after. When the bar
// is disabled it is the underlying writer itself.
func (p *ProgressBar) Writer() io.Writer {
	if !p.enabled {
		return p.w
	}
	return progressLogWriter{p}
}

type progressLogWriter struct{ p *ProgressBar }

func (lw progressLogWriter) Write(b []byte) (int, error) {
	p := lw.p
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
	n, err := p.w.Write(b)
	if p.running {
		p.drawLocked()
	}
	return n, err
}

// Fd lets isTerminal see through the wrapper.
func (lw progressLogWriter) Fd() uintptr {
	if f, ok := lw.p.w.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}

func (p *ProgressBar) clearLocked() {
	if p.onScreen {
		io.WriteString(p.w, "\r\x1b[K")
		p.onScreen = false
	}
}

func (p *ProgressBar) drawLocked() {
	now := p.now()
	p.lastDraw = now
	io.WriteString(p.w, "\r\x1b[K"+p.line(now.Sub(p.start)))
	p.onScreen = true
}

// line renders the bar after elapsed time.
func (p *ProgressBar) line(elapsed time.Duration) string {
	const width = 20
	frac := 1.0
	if p.total > 0 {
		frac = float64(p.done) / float64(p.total)
	}
	frac = min(max(frac, 0), 1)
	fill := int(frac * width)
	bar := strings.Repeat("#", fill) + strings.Repeat(".", width-fill)
	rate, eta := "--", "--"
	if secs := elapsed.Seconds(); secs > 0 && p.images > 0 {
		rate = SI(float64(p.images) / secs)
	}
	if scored := p.done - p.resumed; scored > 0 && p.done < p.total {
		left := time.Duration(float64(elapsed) / float64(scored) * float64(p.total-p.done))
		eta = clock(left)
	} else if p.done >= p.total {
		eta = clock(0)
	}
	return fmt.Sprintf("%*d/%d genomes [%s] %5.1f%%  %s img·genomes/s  ETA %s",
		len(fmt.Sprint(p.total)), p.done, p.total, bar, 100*frac, rate, eta)
}

// clock writes d as h:mm:ss or m:ss, rounded up to the second.
func clock(d time.Duration) string {
	s := int64((d + time.Second - 1) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
