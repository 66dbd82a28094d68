#!/usr/bin/python3
"""PyTorch eager's cold start for the sample MLP, inside one process: the time
to import torch, then from loading the saved model to the first result.

  /usr/bin/python3 tests/benchmarks/torch_cold_start.py torchscript mlp.pt
  /usr/bin/python3 tests/benchmarks/torch_cold_start.py state_dict mlp_state.pt
  import_ms=812.4 load_to_result_ms=3.1 class=6

`torchscript` loads a TorchScript module (torch.jit.load); `state_dict`
builds the nn.Sequential in Python and loads saved weights into it. Both run
the model once on the pattern api_cold_start.c uses. Written by
cold_start.py, which measures the whole process around it too.
"""
import sys
import time

start = time.perf_counter()
import torch  # noqa: E402

imported = time.perf_counter()


def main():
    kind, path = sys.argv[1], sys.argv[2]
    x = torch.tensor([((i * 37) % 256) / 255.0 for i in range(784)], dtype=torch.float32).reshape(1, 784)
    load_start = time.perf_counter()
    if kind == "torchscript":
        model = torch.jit.load(path)
    else:
        model = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                    torch.nn.ReLU(), torch.nn.Linear(512, 10))
        model.load_state_dict(torch.load(path))
    with torch.no_grad():
        scores = model(x)
    best = int(scores.argmax())
    end = time.perf_counter()
    print("import_ms=%.3f load_to_result_ms=%.3f class=%d" % ((imported - start) * 1e3, (end - load_start) * 1e3, best))
    print("scores=" + " ".join("%.9g" % v for v in scores.flatten().tolist()))


if __name__ == "__main__":
    main()
