package serve

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/vram"
)

// metrics are the service's Prometheus metrics (docs/http-api.md, "GET
// /metrics"), on a registry of their own.
type metrics struct {
	reg           *prometheus.Registry
	requests      *prometheus.CounterVec
	requestSecs   *prometheus.HistogramVec
	evaluations   *prometheus.CounterVec
	genomes       *prometheus.CounterVec
	imagesGenomes prometheus.Counter
	rate          prometheus.Gauge
	evalSecs      prometheus.Histogram
	shrinks       prometheus.Counter
	grows         prometheus.Counter
	ooms          prometheus.Counter
	running       prometheus.Gauge
}

func newMetrics(q *queue, dev vram.Device) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	f := func(c prometheus.Collector) { m.reg.MustRegister(c) }
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "neateval_http_requests_total", Help: "Requests answered, by path and status code."}, []string{"path", "code"})
	m.requestSecs = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "neateval_http_request_duration_seconds", Help: "Wall time of a request, queue wait and stream included.",
		Buckets: prometheus.ExponentialBucketsRange(0.001, 3600, 16)}, []string{"path"})
	m.evaluations = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "neateval_evaluations_total", Help: "Evaluations that got a 200, by outcome (ok, failed, cancelled)."}, []string{"outcome"})
	m.genomes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "neateval_genomes_total", Help: "Result lines written, by outcome (scored, error)."}, []string{"outcome"})
	m.imagesGenomes = prometheus.NewCounter(prometheus.CounterOpts{Name: "neateval_images_genomes_total", Help: "Images × genomes scored."})
	m.rate = prometheus.NewGauge(prometheus.GaugeOpts{Name: "neateval_images_genomes_per_second", Help: "Throughput of the last evaluation that finished: images·genomes per second."})
	m.evalSecs = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "neateval_evaluation_seconds", Help: "Wall time of an evaluation, queue wait excluded.",
		Buckets: prometheus.ExponentialBucketsRange(0.1, 3600, 12)})
	m.shrinks = prometheus.NewCounter(prometheus.CounterOpts{Name: "neateval_batch_shrinks_total", Help: "Batch size decreases of the batch controller."})
	m.grows = prometheus.NewCounter(prometheus.CounterOpts{Name: "neateval_batch_grows_total", Help: "Batch size increases of the batch controller."})
	m.ooms = prometheus.NewCounter(prometheus.CounterOpts{Name: "neateval_ooms_total", Help: "Forward slices that ran out of device memory."})
	m.running = prometheus.NewGauge(prometheus.GaugeOpts{Name: "neateval_running", Help: "1 while an evaluation runs."})
	for _, c := range []prometheus.Collector{m.requests, m.requestSecs, m.evaluations, m.genomes, m.imagesGenomes, m.rate, m.evalSecs, m.shrinks, m.grows, m.ooms, m.running} {
		f(c)
	}
	f(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "neateval_queue_length", Help: "Requests accepted and waiting."}, func() float64 { return float64(q.length()) }))
	f(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "neateval_queue_capacity", Help: "Requests that may wait (--queue)."}, func() float64 { return float64(q.capacity) }))
	if dev != nil {
		f(newMemoryCollector(dev))
	}
	return m
}

// result counts one result line.
func (m *metrics) result(r evaluator.Result) {
	outcome := "scored"
	if r.Err != nil {
		outcome = "error"
	}
	m.genomes.WithLabelValues(outcome).Inc()
	m.imagesGenomes.Add(float64(r.Images))
	m.shrinks.Add(float64(r.Shrinks))
	m.grows.Add(float64(r.Grows))
	m.ooms.Add(float64(r.OOMs))
}

// request counts one answered request; path is a known path or "other".
func (m *metrics) request(path string, code int, seconds float64) {
	m.requests.WithLabelValues(path, strconv.Itoa(code)).Inc()
	m.requestSecs.WithLabelValues(path).Observe(seconds)
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// memoryCollector reports the device's memory when scraped.
type memoryCollector struct {
	dev  vram.Device
	desc *prometheus.Desc
}

func newMemoryCollector(dev vram.Device) *memoryCollector {
	return &memoryCollector{dev: dev, desc: prometheus.NewDesc("neateval_device_memory_bytes",
		"The device's memory, by kind (total, free).", []string{"kind"}, nil)}
}

func (c *memoryCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *memoryCollector) Collect(ch chan<- prometheus.Metric) {
	total, free := c.dev.MemInfo()
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(total), "total")
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(free), "free")
}
