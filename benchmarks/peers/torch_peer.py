"""PyTorch, written as a PyTorch user writes it for speed: data resident as tensors, batches by index
slicing (no DataLoader), Adam with foreach updates; torch.func vmap over stacked parameters as the
fused way of training several models of one shape.

Semantics as Keras's (workloads.py): Glorot-uniform kernels, zero biases, shuffling every epoch,
the last partial batch kept, cross-entropies from logits. torch.optim.Adam adds epsilon (1e-7) to
sqrt(v_hat) where Keras adds it to sqrt(v): a difference in the last digits, not in the work.

usage: torch_peer.py TASK [--threads 1|default] [--device cpu|cuda] [--batch B] [--epochs E] [--model I]
  w1-step     the tiny model (W1): seconds per training step, after a warm-up epoch
  w1-process  W1 as a user runs it: imports, data, 2 epochs; the harness times the whole process
  w2          the Fashion-MNIST MLP (W2): seconds per epoch and the test accuracy
  w4          Keras's MLP (W4): seconds per epoch (validation included) and the test accuracy
  w3-serial   the W3 models one after another in one process
  w3-one      one W3 model (--model I), for the one-process-per-model way
  w3-vmap     the W3 models by shape, each shape's models in one torch.func.vmap (the fused peer)
Prints one JSON line: the task's figures, and import_s (importing torch).
"""
import argparse
import json
import sys
import time

started = time.perf_counter()
import torch  # noqa: E402
from torch import nn  # noqa: E402
from torch.func import functional_call, stack_module_state, vmap  # noqa: E402

import workloads  # noqa: E402

import_s = time.perf_counter() - started
ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh}


def model_for(w, seed, device):
    torch.manual_seed(seed)
    layers, fan_in = [], w["input"]
    for units in w["hidden"]:
        layers += [nn.Linear(fan_in, units), ACTIVATIONS[w["activation"]]()]
        if "dropout" in w:
            layers.append(nn.Dropout(w["dropout"]))
        fan_in = units
    layers.append(nn.Linear(fan_in, w["outputs"]))
    model = nn.Sequential(*layers)
    for layer in model:
        if isinstance(layer, nn.Linear):
            nn.init.xavier_uniform_(layer.weight)
            nn.init.zeros_(layer.bias)
    return model.to(device)


def loss_for(w):
    return nn.BCEWithLogitsLoss() if w["outputs"] == 1 else nn.CrossEntropyLoss()


def train(model, w, x, y, batch, epochs, device, validation=None):
    """Seconds of each epoch: its steps, and with `validation` (x, y) its loss on them, as Keras's fit."""
    if "dropout" in w:  # Keras's RMSprop: rho 0.9, epsilon 1e-7 (torch adds it outside the root, Keras inside:
        # the same work a step, which is what W4 times)
        optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3, alpha=0.9, eps=1e-7, foreach=True)
    else:
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7, foreach=True)
    loss_fn, seconds = loss_for(w), []
    for _ in range(epochs):
        start = time.perf_counter()
        model.train()
        order = torch.randperm(len(x), device=device)
        for i in range(0, len(x), batch):
            index = order[i:i + batch]
            optimizer.zero_grad(set_to_none=True)
            loss_fn(model(x[index]), y[index]).backward()
            optimizer.step()
        if validation is not None:
            model.eval()
            with torch.no_grad():
                loss_fn(model(validation[0]), validation[1]).item()
        if device == "cuda":
            torch.cuda.synchronize()
        seconds.append(time.perf_counter() - start)
    return seconds


@torch.no_grad()
def accuracy(model, x, y):
    return float((model(x).argmax(1) == y).float().mean())


def train_vmapped(ws, seeds, x, y, epochs, device):
    """The models of one shape trained together: parameters stacked (K, ...), one vmapped call per
    step, each model its own data order. Returns the models' test predictions' function."""
    models = [model_for(w, s, device) for w, s in zip(ws, seeds)]
    params, buffers = stack_module_state(models)
    base = model_for(ws[0], 0, "meta")
    optimizer = torch.optim.Adam(params.values(), lr=1e-3, eps=1e-7, foreach=True)
    loss_fn = nn.CrossEntropyLoss()
    call = vmap(lambda p, b, xb: functional_call(base, (p, b), (xb,)))
    batch, k = ws[0]["batch"], len(ws)
    for _ in range(epochs):
        orders = torch.stack([torch.randperm(len(x), device=device) for _ in range(k)])
        for i in range(0, len(x), batch):
            index = orders[:, i:i + batch]  # (K, B): each model its own rows
            optimizer.zero_grad(set_to_none=True)
            logits = call(params, buffers, x[index])  # (K, B, 10)
            # The sum of the models' mean losses: each model's gradient is its own loss's.
            loss_fn(logits.reshape(-1, logits.shape[-1]), y[index].reshape(-1)).mul(k).backward()
            optimizer.step()
    return lambda xt: call(params, buffers, xt.expand(k, *xt.shape))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("task")
    p.add_argument("--threads", default="default")
    p.add_argument("--device", default="cpu")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--model", type=int, default=0)
    a = p.parse_args()
    if a.threads != "default":
        torch.set_num_threads(int(a.threads))
        torch.set_num_interop_threads(int(a.threads))
    dev = a.device
    out = {"peer": "torch", "torch": torch.__version__, "threads": a.threads, "device": dev, "task": a.task,
           "import_s": import_s}
    if a.task in ("w1-step", "w1-process"):
        x, y = (torch.from_numpy(v).to(dev) for v in workloads.w1_data())
        model = model_for(workloads.W1, 1, dev)
        if a.task == "w1-step":
            train(model, workloads.W1, x, y, workloads.W1["batch"], 1, dev)  # warm-up
            seconds = train(model, workloads.W1, x, y, workloads.W1["batch"], a.epochs, dev)
            out["step_s"] = sum(seconds) / (a.epochs * -(-len(x) // workloads.W1["batch"]))
        else:
            train(model, workloads.W1, x, y, workloads.W1["batch"], 2, dev)
    else:
        x, y, xt, yt = (torch.from_numpy(v).to(dev) for v in workloads.fashion_mnist())
        if a.task == "w2":
            model = model_for(workloads.W2, 42, dev)
            out["epoch_s"] = train(model, workloads.W2, x, y, a.batch, a.epochs, dev)
            out["test_accuracy"] = accuracy(model, xt, yt)
        elif a.task == "w4":
            w = workloads.W4
            split = int(len(x) * (1 - w["validation_split"]))  # Keras's: the last rows validate
            model = model_for(w, 42, dev)
            out["epoch_s"] = train(model, w, x[:split], y[:split], w["batch"], a.epochs, dev, (x[split:], y[split:]))
            model.eval()
            out["test_accuracy"] = accuracy(model, xt, yt)
        elif a.task in ("w3-serial", "w3-one"):
            chosen = range(len(workloads.W3_GRID)) if a.task == "w3-serial" else [a.model]
            start, out["test_accuracy"] = time.perf_counter(), []
            for i in chosen:
                w = workloads.W3_GRID[i]
                model = model_for(w, 42, dev)
                train(model, w, x, y, w["batch"], a.epochs, dev)
                out["test_accuracy"].append(accuracy(model, xt, yt))
            out["train_s"] = time.perf_counter() - start
        elif a.task == "w3-vmap":
            shapes = {}
            for w in workloads.W3_GRID:
                shapes.setdefault((tuple(w["hidden"]), w["activation"]), []).append(w)
            start, out["test_accuracy"] = time.perf_counter(), []
            for ws in shapes.values():
                predict = train_vmapped(ws, [42 + i for i in range(len(ws))], x, y, a.epochs, dev)
                with torch.no_grad():
                    out["test_accuracy"] += [float(v) for v in (predict(xt).argmax(2) == yt).float().mean(1)]
            out["train_s"] = time.perf_counter() - start
            out["shapes"] = len(shapes)
        else:
            sys.exit(f"torch_peer.py: unknown task {a.task}")
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
