"""torch_tf32.py: bench/torch_ref.py with TF32 set one way for both
convolutions (cuDNN; PyTorch's default is on) and matrix products
(cuBLAS; PyTorch's default is off), so that a GPU check compares
PyTorch's speed and fitness in exact float32 and in TF32 on the same card.

    python3 scripts/torch_tf32.py on|off TORCH_REF_ARGS...
"""

import os
import runpy
import sys

import torch


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("on", "off"):
        sys.exit("usage: torch_tf32.py on|off TORCH_REF_ARGS...")
    on = sys.argv[1] == "on"
    torch.backends.cudnn.allow_tf32 = on
    torch.backends.cuda.matmul.allow_tf32 = on
    ref = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench", "torch_ref.py")
    sys.argv = [ref] + sys.argv[2:]
    runpy.run_path(ref, run_name="__main__")


if __name__ == "__main__":
    main()
