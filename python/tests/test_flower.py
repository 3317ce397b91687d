"""FDP-Fair over Flower's real deployment: a SuperLink and three SuperNodes as separate processes
on 127.0.0.1 (insecure mode), `flwr run` of dpfair's Flower App on three site files split from
Adult, and the model the ServerApp writes predicted by `dpfair predict`. Its accuracy and
unfairness must equal those of the file protocol (`dpfair federated`) on the same site files
within the spread of independent runs, and its ledger must show each site's spend.

Skipped (and saying so) without flwr, the `dpfair` binary, or the Adult file of DPFAIR_DATA_DIR.
Every process is started in its own process group, and killed at the end whatever happens.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import REPO

pytest.importorskip("flwr", reason="flwr is not installed (pip install 'flwr==1.42.*')")

from dpfair import federated  # noqa: E402

SITES = ("hospital", "clinic", "lab")
PER_SITE = 3000
TEST_ROWS = 8000
COLUMNS = ["--target", "Label", "--sensitive", "Sensitive", "--groups", "0,1"]
BOUNDS = "Age:17:90,Workclass:0:8,Education-Num:1:16"
BASIS = {"bandwidth": 0.25, "frequencies": 256}
EPSILON = 1.0
ALPHA = 0.1
#: Seconds any one wait may take (a process starting, the whole run), on a loaded machine.
WAIT = 240


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    """Three site CSVs and a test CSV: disjoint blocks of the shuffled FDP-Fair Adult file."""
    folder = os.environ.get("DPFAIR_DATA_DIR")
    path = Path(folder or "", "fdpfair_adult.csv")
    if not folder or not path.is_file():
        pytest.skip(f"skipped: {path} is missing (set DPFAIR_DATA_DIR)")
    frame = pd.read_csv(path).sample(frac=1.0, random_state=7).reset_index(drop=True)
    out = tmp_path_factory.mktemp("flower-sites")
    files = {}
    for i, name in enumerate(SITES):
        files[name] = out / f"{name}.csv"
        frame.iloc[i * PER_SITE : (i + 1) * PER_SITE].to_csv(files[name], index=False)
    test = out / "test.csv"
    frame.iloc[len(SITES) * PER_SITE :].head(TEST_ROWS).to_csv(test, index=False)
    return files, test


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tool(name: str) -> str:
    """A console script of this interpreter's environment (flwr's)."""
    return str(Path(sys.executable).parent / name)


@contextmanager
def processes():
    """Start processes in their own process groups; kill every group on the way out."""
    started = []

    def start(args, log: Path, env=None):
        p = subprocess.Popen(
            args,
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        started.append(p)
        return p

    try:
        yield start
    finally:
        for p in started:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in started:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=15)


def wait_for_port(port: int, proc, log: Path) -> None:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"{proc.args[0]} exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    pytest.fail(f"{proc.args[0]} did not listen on {port} within {WAIT} s")


def cli(binary: str, *args: str) -> None:
    done = subprocess.run([binary, *args], capture_output=True, text=True, timeout=WAIT)
    assert done.returncode == 0, done.stderr


def file_protocol(binary: str, files: dict, folder: Path) -> Path:
    """The reference: `dpfair federated` with files, the same sites, options and budget."""
    basis = ["--bandwidth", str(BASIS["bandwidth"]), "--frequencies", str(BASIS["frequencies"])]
    common = [*COLUMNS, "--bounds", BOUNDS, "--epsilon", str(EPSILON)]
    r1, r2 = [], []
    for name, csv in files.items():
        r1.append(str(folder / f"r1_{name}.json"))
        cli(
            binary,
            "federated",
            "site",
            "round1",
            "--data",
            str(csv),
            *common,
            *basis,
            "--site",
            name,
            "--run",
            "ref",
            "--out",
            r1[-1],
        )
    global_ = str(folder / "global.json")
    cli(binary, "federated", "aggregate", "round1", *r1, "--run", "ref", "--out", global_)
    for name, csv in files.items():
        r2.append(str(folder / f"r2_{name}.json"))
        cli(
            binary,
            "federated",
            "site",
            "round2",
            "--global",
            global_,
            "--data",
            str(csv),
            *common,
            "--site",
            name,
            "--round1",
            str(folder / f"r1_{name}.json"),
            "--out",
            r2[-1],
        )
    model = folder / "file-protocol.json"
    cli(
        binary,
        "federated",
        "aggregate",
        "round2",
        "--global",
        global_,
        *r2,
        "--alpha",
        str(ALPHA),
        "--out",
        str(model),
    )
    return model


def metrics(prediction: np.ndarray, test: pd.DataFrame) -> tuple:
    """Accuracy and unfairness |P(Ŷ=1 | A=1) − P(Ŷ=1 | A=0)| on the test rows."""
    y, a = test["Label"].to_numpy(), test["Sensitive"].to_numpy()
    return (
        float(np.mean(prediction == y)),
        float(abs(prediction[a == 1].mean() - prediction[a == 0].mean())),
    )


def cli_metrics(binary: str, model: Path, test_csv: Path) -> tuple:
    out = model.with_suffix(".pred.csv")
    cli(binary, "predict", "--model", str(model), "--data", str(test_csv), "--out", str(out))
    prediction = pd.read_csv(out)["prediction"].to_numpy()
    return metrics(prediction, pd.read_csv(test_csv))


def in_process_run(files: dict, test: pd.DataFrame) -> tuple:
    """One more independent draw of the file protocol's steps (the same library calls, in
    process): for the spread of accuracy and unfairness between runs."""
    bounds = {c: (float(lo), float(hi)) for c, lo, hi in (b.split(":") for b in BOUNDS.split(","))}
    sites = [
        federated.Site.from_csv(
            name,
            csv,
            target="Label",
            sensitive="Sensitive",
            groups=[0, 1],
            bounds=bounds,
            epsilon=EPSILON,
            **BASIS,
        )
        for name, csv in files.items()
    ]
    g = federated.aggregate_round1([s.round1() for s in sites])
    clf = federated.aggregate_round2(g, [s.round2(g) for s in sites], alpha=ALPHA)
    prediction = clf.predict(test[["Age", "Workclass", "Education-Num"]], test["Sensitive"])
    return metrics(np.asarray(prediction).astype(int), test)


def flower_run(files: dict, folder: Path) -> Path:
    """SuperLink + one SuperNode per site as separate processes, `flwr run`; the model file."""
    link_port = free_port()
    model = folder / "flower-model.json"
    home = folder / "flwr-home"
    home.mkdir()
    (home / "config.toml").write_text(
        f'[superlink]\ndefault = "test"\n\n[superlink.test]\n'
        f'address = "127.0.0.1:{link_port}"\ninsecure = true\n'
    )
    env = {**os.environ, "FLWR_HOME": str(home), "FLWR_DISABLE_UPDATE_CHECK": "1"}
    with processes() as start:
        log = folder / "superlink.log"
        link = start(
            [
                tool("flower-superlink"),
                "--insecure",
                "--disable-runtime-dependency-installation",
                "--host",
                "127.0.0.1",
                "--port",
                str(link_port),
            ],
            log,
            env,
        )
        wait_for_port(link_port, link, log)
        for name, csv in files.items():
            node_config = (
                f'data="{csv}" site="{name}" epsilon={EPSILON} ledger-dir="{folder / "ledgers"}"'
            )
            start(
                [
                    tool("flower-supernode"),
                    "--insecure",
                    "--superlink",
                    f"127.0.0.1:{link_port}",
                    "--port",
                    str(free_port()),
                    "--node-config",
                    node_config,
                ],
                folder / f"supernode-{name}.log",
                env,
            )
        run_config = " ".join(
            [
                f'sites={len(files)} timeout={WAIT} target="Label" sensitive="Sensitive"',
                f'groups="0,1" bounds="{BOUNDS}" bandwidth={BASIS["bandwidth"]}',
                f'frequencies={BASIS["frequencies"]} alpha={ALPHA} model-out="{model}"',
            ]
        )
        log = folder / "flwr-run.log"
        run = start(
            [
                tool("flwr"),
                "run",
                str(REPO / "python" / "flower-app"),
                "test",
                "--stream",
                "--run-config",
                run_config,
            ],
            log,
            env,
        )
        deadline = time.monotonic() + WAIT
        while not model.exists() and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
        logs = "\n".join(
            f"--- {p.name}\n{p.read_text()[-2000:]}" for p in sorted(folder.glob("*.log"))
        )
        assert model.exists(), f"no model file after the Flower run:\n{logs}"
    return model


def test_fdp_fair_over_flower_equals_the_file_protocol(sites, dpfair_bin, tmp_path):
    files, test_csv = sites
    test = pd.read_csv(test_csv)
    model = flower_run(files, tmp_path)

    # The model the ServerApp wrote is a dpfair model file: the CLI predicts with it.
    flower = cli_metrics(dpfair_bin, model, test_csv)
    reference = cli_metrics(dpfair_bin, file_protocol(dpfair_bin, files, tmp_path), test_csv)

    # Its ledger holds every site's releases, each site spending its ε = 1 (both rounds, on
    # disjoint halves), and the total is the worst site's spend (federated DP).
    file = json.loads(model.read_text())
    assert file["method"] == "fdp-fair"
    entries = file["ledger"]["entries"]
    for name in SITES:
        halves = {}
        for e in entries:
            if e["label"].startswith(f"site {name}:"):
                part = e["composition"]["part"]
                halves[part] = halves.get(part, 0.0) + e["cost"]["epsilon"]
        assert sorted(halves) == [f"site {name}: {h} half" for h in ("calibration", "training")]
        assert all(eps == pytest.approx(EPSILON, rel=1e-9) for eps in halves.values()), halves
    assert len(entries) == sum(e["label"].startswith("site ") for e in entries)
    # Each site kept its own transcripts (its record of what it released), one per round.
    kept = sorted(p.name for p in (tmp_path / "ledgers").iterdir())
    assert len(kept) == 2 * len(SITES), kept
    for p in (tmp_path / "ledgers").iterdir():
        epsilon, delta = federated.transcript_spend(p.read_text())
        assert epsilon == pytest.approx(EPSILON, rel=1e-9), p.name

    # The tolerance: the Flower run and the file-protocol run are two independent draws of
    # the same randomised procedure (fresh OS noise and split seeds), so their difference has
    # standard deviation √2·σ, σ the between-run spread of a metric, estimated from R = 100
    # more independent draws of the same steps in process (s, R − 1 degrees of freedom). For a
    # normal metric |x_flower − x_file| ≤ t_{1−5·10⁻⁸, R−1}·s·√2 fails an honest run with
    # probability 10⁻⁷. Neither metric is normal: the unfairness is skewed (τ̃ = 0 in some runs
    # gives the unconstrained disparity), its upper tail exponential with scale 0.014 (beyond
    # its 90 % point, 0.051, in 5,000 in-process runs) and the accuracy's tails with scale 0.004.
    # So the tolerance is at least three times the range of the R draws (median 0.26 for the
    # unfairness, 0.11 for the accuracy; 0.17 and 0.068 in the lowest 0.1 % of draw sets): on
    # those tails |x_flower − x_file| exceeds it with probability about 10⁻⁷. The former
    # tolerance (t at 1 − 0.0005, R = 24, one range) failed about 1 run in 170 (simulated).
    from scipy.stats import t as student

    draws = np.array([in_process_run(files, test) for _ in range(100)])
    s = draws.std(axis=0, ddof=1)
    t_bound = student.ppf(1 - 5e-8, len(draws) - 1) * s * np.sqrt(2)
    tolerance = np.maximum(t_bound, 3.0 * (draws.max(axis=0) - draws.min(axis=0)))
    for what, f, r, tol in zip(("accuracy", "unfairness"), flower, reference, tolerance):
        assert abs(f - r) <= tol, f"{what}: Flower {f:.4f}, file protocol {r:.4f}, tol {tol:.4f}"
