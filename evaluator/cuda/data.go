//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"sync"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/cuda/internal/sched"
	"github.com/neateval/neateval/vram"
)

// data is the validation set: on the device when cached (the images in the
// storage type, then the labels, one byte each), else on the host, copied
// slice by slice into each forward's arena.
type data struct {
	ds      *datasets.Dataset
	b       *Backend
	imgSize int
	block   *vram.Block
	labOff  int64 // byte offset of the labels in block
	once    sync.Once
}

func (d *data) Len() int { return d.ds.N }

func (d *data) Bytes() int64 {
	if d.block == nil {
		return 0
	}
	return d.block.Size
}

func (d *data) Release() {
	d.once.Do(func() {
		if d.block != nil {
			d.b.dev.Free(d.block)
		}
	})
}

// uploadChunk is the pinned buffer the cached set is copied through.
const uploadChunk = 16 << 20

// PrepareData uploads the images and labels once when cache is true; they
// then count as fixed memory.
func (b *Backend) PrepareData(ds *datasets.Dataset, cache bool) (evaluator.Data, error) {
	d := &data{ds: ds, b: b, imgSize: ds.ImageSize()}
	if !cache {
		return d, nil
	}
	elem := int64(b.dtype.Size())
	imgBytes := int64(len(ds.Images)) * elem
	d.labOff = (imgBytes + sched.Align - 1) / sched.Align * sched.Align
	total := d.labOff + int64(len(ds.Labels))
	blk, err := b.dev.Alloc(max(total, 1))
	if err != nil {
		return nil, fmt.Errorf("caching the validation set on the device (%s): %w", vram.FormatBytes(total), err)
	}
	d.block = blk
	if err := b.upload(d); err != nil {
		d.Release()
		return nil, fmt.Errorf("caching the validation set on the device: %w", err)
	}
	return d, nil
}

// upload copies the images (converted to the storage type) and the labels
// into d.block through one pinned buffer, synchronously.
func (b *Backend) upload(d *data) error {
	buf, err := b.pool.get(uploadChunk)
	if err != nil {
		return err
	}
	defer b.pool.put(buf)
	elem := int64(b.dtype.Size())
	imgs := d.ds.Images
	per := uploadChunk / elem
	for lo := int64(0); lo < int64(len(imgs)); lo += per {
		hi := min(lo+per, int64(len(imgs)))
		b.storeValues(buf, 0, imgs[lo:hi])
		if err := b.w.do(func() error {
			return b.drv.htod(devptr(d.block.Addr+uint64(lo*elem)), buf.p, (hi-lo)*elem)
		}); err != nil {
			return err
		}
	}
	labels := d.ds.Labels
	for lo := 0; lo < len(labels); lo += uploadChunk {
		hi := min(lo+uploadChunk, len(labels))
		copy(buf.bytes(int64(hi-lo)), labels[lo:hi])
		if err := b.w.do(func() error {
			return b.drv.htod(devptr(d.block.Addr+uint64(d.labOff)+uint64(lo)), buf.p, int64(hi-lo))
		}); err != nil {
			return err
		}
	}
	return nil
}
