package vram_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/vram"
)

// A genome's forward over 60000 images on a 64 MiB device: the controller
// starts at eval_batch_size (45000), runs out of memory, lands on the size
// its memory model expects to fit, and keeps the peak under 80% of the
// device.
func ExampleBatchController() {
	dev, err := vram.NewCPUDevice(vram.CPUOptions{MemoryBytes: 64 << 20})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dev.Close()
	ctl := vram.NewBatchController(vram.ControllerConfig{Start: 45000}, dev, zerolog.New(os.Stdout))

	// The forward keeps 4 KiB of activations per image, in one buffer.
	need := vram.Need{ActPerImage: 4096, Buffers: 1}
	forward := func(lo, hi int) error {
		act, err := dev.Alloc(need.Act(hi - lo))
		if err != nil {
			return err // nothing else is held: the controller retries smaller
		}
		defer dev.Free(act)
		out := dev.Float32s(act)
		out[0] = 1 // the kernels write here
		return nil
	}
	st, err := ctl.Run(context.Background(), vram.Job{Genome: 7, Need: need}, 60000, forward)
	fmt.Printf("%+v %v\n", st, err)
	// Output:
	// {"level":"info","event":"batch_shrink","genome":7,"old_batch":45000,"new_batch":13107,"bytes_requested":184320511,"bytes_free":67108864,"reason":"oom","message":"VRAM | genome 7 | batch 45000 → 13107 (oom: 175.78 MiB requested, 64.00 MiB free)"}
	// {"level":"info","event":"batch_shrink","genome":7,"old_batch":13107,"new_batch":12582,"bytes_requested":54525952,"bytes_free":12582912,"reason":"threshold","message":"VRAM | genome 7 | batch 13107 → 12582 (threshold: 52.00 MiB requested, 12.00 MiB free)"}
	// {Slices:5 OOMs:1 Shrinks:2 Grows:0 FinalBatch:12582} <nil>
}

// The CPU device's arena runs out like a GPU: the error says what was asked
// and what was free, and matches ErrOutOfMemory.
func ExampleCPUDevice() {
	dev, err := vram.NewCPUDevice(vram.CPUOptions{MemoryBytes: 8 << 20})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dev.Close()
	weights, _ := dev.Alloc(5 << 20)
	defer dev.Free(weights)
	if err := dev.CopyIn(weights, 0, []byte{1, 2, 3, 4}); err != nil {
		fmt.Println(err)
	}
	fmt.Println(dev.Float32s(weights)[0] != 0, len(dev.Bytes(weights)))

	_, err = dev.Alloc(4 << 20)
	fmt.Println(errors.Is(err, vram.ErrOutOfMemory))
	fmt.Println(err)
	st := dev.Stats()
	fmt.Println(vram.FormatBytes(st.Allocated), vram.FormatBytes(st.Reserved), st.OOMs)
	// Output:
	// true 5242880
	// true
	// cpu: out of memory: tried to allocate 4.00 MiB with 2.00 MiB free of 8.00 MiB (5.00 MiB allocated, 1.00 MiB cached)
	// 5.00 MiB 6.00 MiB 1
}

// FitBatch answers how many images fit beside the weights.
func ExampleFitBatch() {
	need := vram.Need{Model: 12 << 20, ActPerImage: 50 << 10, ActFixed: 4 << 20, Buffers: 6}
	fmt.Println(vram.FormatBytes(need.Peak(1000)))
	fmt.Println(vram.FitBatch(need, 1<<30))
	fmt.Println(vram.FitBatch(need, 16<<20))
	// Output:
	// 64.83 MiB
	// 20643
	// 0
}
