package serve

import (
	"io"
	"net/http"
	"time"

	"github.com/neateval/neateval/run"
	"github.com/neateval/neateval/vram"
)

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, "ok\n")
}

// Status is the document of GET /v1/status.
type Status struct {
	Version       string         `json:"version"`
	Backend       string         `json:"backend"`
	Device        string         `json:"device"`
	DType         string         `json:"dtype"`
	Memory        StatusMemory   `json:"memory"`
	Dataset       StatusDataset  `json:"dataset"`
	Fitness       string         `json:"fitness"`
	Queue         StatusQueue    `json:"queue"`
	Running       *StatusRunning `json:"running"`
	UptimeSeconds float64        `json:"uptime_seconds"`
}

// StatusMemory is the device's memory now, in bytes.
type StatusMemory struct {
	TotalBytes int64 `json:"total_bytes"`
	FreeBytes  int64 `json:"free_bytes"`
}

// StatusDataset is the data set, before any limit.
type StatusDataset struct {
	Name   string `json:"name"`
	Images int    `json:"images"`
}

// StatusQueue is the queue: requests waiting, and the places.
type StatusQueue struct {
	Length   int `json:"length"`
	Capacity int `json:"capacity"`
}

// StatusRunning is the evaluation running.
type StatusRunning struct {
	Genomes int       `json:"genomes"`
	Done    int       `json:"done"`
	Images  int       `json:"images"`
	Started time.Time `json:"started"`
}

// Status is the service's state now.
func (s *Server) Status() Status {
	st := Status{
		Version:       run.Version(),
		Dataset:       StatusDataset{Name: s.ds.Name, Images: s.ds.N},
		Fitness:       s.cfg.Eval.Fitness,
		Queue:         StatusQueue{Length: s.queue.length(), Capacity: s.queue.capacity},
		UptimeSeconds: time.Since(s.started).Seconds(),
	}
	if b := s.backend; b != nil {
		st.Backend, st.Device, st.DType = b.Name(), b.Device().Name(), b.DType().String()
	}
	if d := s.device(); d != nil {
		st.Memory.TotalBytes, st.Memory.FreeBytes = d.MemInfo()
	}
	if p := s.running.Load(); p != nil {
		st.Running = &StatusRunning{Genomes: p.genomes, Done: int(p.done.Load()), Images: p.images, Started: p.started.UTC()}
	}
	return st
}

func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	writeJSONLine(w, s.Status())
}

// device is the backend's device, nil without a backend.
func (s *Server) device() vram.Device {
	if s.backend == nil {
		return nil
	}
	return s.backend.Device()
}

// retryAfterSeconds estimates when the running evaluation ends, from its
// pace so far (0 when it has none yet).
func (s *Server) retryAfterSeconds() float64 {
	p := s.running.Load()
	if p == nil {
		return 0
	}
	done := p.done.Load()
	if done == 0 {
		return 0
	}
	el := time.Since(p.started).Seconds()
	return el / float64(done) * float64(int64(p.genomes)-done)
}
