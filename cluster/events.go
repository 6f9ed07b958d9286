package cluster

// The events this package logs, and their field keys (docs/log-events.md
// lists them with their fields).
const (
	EventBrokerStarted    = "broker_started"
	EventWorkerStarted    = "worker_started"
	EventWorkerStopped    = "worker_stopped"
	EventItemsPublished   = "items_published"
	EventItemTaken        = "item_taken"
	EventItemRedelivered  = "item_redelivered"
	EventItemDone         = "item_done"
	EventItemFailed       = "item_failed"
	EventItemRefused      = "item_refused"
	EventItemAbandoned    = "item_abandoned"
	EventResultsRecovered = "results_recovered"
	EventBrokerError      = "broker_error"
)

// Field keys of this package's events.
const (
	KeyEvent        = "event"
	KeyURL          = "url"
	KeyStore        = "store"
	KeyWorker       = "worker"
	KeyRun          = "run"
	KeyItem         = "item"
	KeyItems        = "items"
	KeyGenomes      = "genomes"
	KeyDeliveries   = "deliveries"
	KeySeconds      = "seconds"
	KeyCause        = "cause"
	KeyBytes        = "bytes"
	KeyError        = "error"
	KeyRedeliveries = "redeliveries"
)
