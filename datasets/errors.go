package datasets

import "errors"

// Sentinel errors wrapped by the loaders, for use with [errors.Is]. The
// wrapping error names the file (or files) and gives the details.
var (
	// ErrMagic: the file does not start with the expected magic number, or
	// its IDX data type is not unsigned byte.
	ErrMagic = errors.New("bad magic number")
	// ErrDims: the number of IDX dimensions is wrong, or a dimension is zero
	// or not the one the data set requires.
	ErrDims = errors.New("bad dimensions")
	// ErrTruncated: the file is shorter than its header says.
	ErrTruncated = errors.New("truncated")
	// ErrTrailing: the file is longer than its header says.
	ErrTrailing = errors.New("trailing data")
	// ErrCount: an images file and its labels file disagree on the count.
	ErrCount = errors.New("image and label counts differ")
	// ErrLabel: a label is outside [0, NumClasses).
	ErrLabel = errors.New("label out of range")
	// ErrRecordSize: a CIFAR-10 file's size is not a whole number of records.
	ErrRecordSize = errors.New("bad record size")
	// ErrGzip: a gzipped file's compressed stream is corrupt or cut short.
	ErrGzip = errors.New("bad gzip stream")
	// ErrEmpty: the file holds no images.
	ErrEmpty = errors.New("no images")
	// ErrNotFound: the files of a data set are not where they were looked for.
	ErrNotFound = errors.New("data set files not found")
)
