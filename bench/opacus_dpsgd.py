"""Per-epoch DP-SGD throughput of Opacus on CPU for logistic regression on Adult-shaped data
(22,610 x 102: 6 numeric columns, 8 categorical variables one-hot into 96 columns), clipping
1.5, noise multiplier 1, Poisson sampling with expected batch 256 and 1,024: the comparison for
`crates/learn/benches/dpsgd.rs`. One torch thread (the Rust DP-SGD loop is single-threaded).

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install torch opacus numpy
    /tmp/venv/bin/python bench/opacus_dpsgd.py [--epochs 5]
"""
import argparse
import time
import warnings

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore")
from opacus import PrivacyEngine  # noqa: E402


def adult_shaped(n, rng):
    x = np.zeros((n, 102), dtype=np.float32)
    x[:, :6] = rng.standard_normal((n, 6))
    for c in range(8):
        x[np.arange(n), 6 + 12 * c + rng.integers(0, 12, n)] = 1.0
    score = -1.0 + x[:, :6] @ np.array([0.5, -0.5] * 3, dtype=np.float32)
    y = (rng.random(n) < 1 / (1 + np.exp(-score))).astype(np.float32)
    return x, y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(1)
    import opacus
    print(f"torch {torch.__version__}, opacus {opacus.__version__}, 1 thread")
    x, y = adult_shaped(22_610, np.random.default_rng(1))
    ds = TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
    for batch in (256, 1024):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(102, 1), nn.Sigmoid())
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        loader = DataLoader(ds, batch_size=batch)
        engine = PrivacyEngine(accountant="rdp")
        model, opt, loader = engine.make_private(
            module=model, optimizer=opt, data_loader=loader,
            noise_multiplier=1.0, max_grad_norm=1.5, poisson_sampling=True)
        loss_fn = nn.BCELoss()
        times = []
        for _ in range(args.epochs):
            t0 = time.perf_counter()
            for xb, yb in loader:
                if len(xb) == 0:
                    continue
                opt.zero_grad()
                loss = loss_fn(model(xb).squeeze(1), yb)
                loss.backward()
                opt.step()
            times.append(time.perf_counter() - t0)
        times.sort()
        med = times[len(times) // 2]
        print(f"batch {batch}: {len(loader)} steps/epoch, median epoch {med * 1e3:.1f} ms, "
              f"{22_610 / med:,.0f} examples/s")


if __name__ == "__main__":
    main()
