"""FDP-Fair across sites with Flower: a `ClientApp` per site and a `ServerApp` (Message API).

The protocol is `dpfair.federated`'s (the CLI's `dpfair federated`), carried by Flower instead
of files (docs/deploy.md has the commands and the trust model):

1. the ServerApp sends `query.round1` (the run id) to every SuperNode; each site's ClientApp
   loads its own CSV, releases round 1 on its own budget and replies with its transcript;
2. the ServerApp checks every transcript and aggregates (`aggregate_round1`), then sends
   `query.round2` with the broadcast; each site releases its trees and replies;
3. the ServerApp runs Algorithm 2's selection (`aggregate_round2`) and writes the model file
   (`model-out`), which `dpfair predict --model` reads; its ledger holds every site's releases.

A site's private choices are the SuperNode's `--node-config`: `data` (its CSV), `epsilon`,
optionally `delta`, `site` (its name; default the CSV's name) and `ledger-dir` (where the site
keeps its transcripts: its own record of what it released). The federation's public choices
are the run config (`[tool.flwr.app.config]` of the app's pyproject.toml, overridden with
`flwr run --run-config`): columns, public bounds, basis, α, where the model goes. A site never
takes its budget from the server, and answers each round once per run.

With Flower's simulation engine (no `data` in the node config) site `partition-id` takes the
rows of block `partition-id` of `num-partitions` contiguous blocks of the run config's `data`,
at the run config's `epsilon` (an experiment, not a deployment).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from flwr.app import ConfigRecord, Context, Message, RecordDict
from flwr.clientapp import ClientApp
from flwr.serverapp import Grid, ServerApp

from dpfair import federated

__all__ = ["client_app", "server_app"]

log = logging.getLogger("dpfair.flower")

#: The record every message of the protocol carries its payload in.
RECORD = "dpfair"
#: The ClientApp's state record (what this site released in this run).
STATE = "dpfair-site"


# -- configuration --------------------------------------------------------------------------


def _text(config: Any, key: str, default: str = "") -> str:
    return str(config.get(key, default))


def _list(config: Any, key: str) -> list | None:
    value = _text(config, key)
    return [v.strip() for v in value.split(",") if v.strip()] or None


def _optional(config: Any, key: str, kind: type) -> Any:
    """`config[key]` as `kind`, None when absent or empty (TOML has no null)."""
    value = config.get(key, "")
    return None if value == "" else kind(value)


def parse_bounds(text: str) -> dict | None:
    """`"x1:0:1,x2:0:1"` (the CLI's `--bounds`) as `{"x1": (0.0, 1.0), ...}`.

    >>> parse_bounds("age:17:90, hours:0:99")
    {'age': (17.0, 90.0), 'hours': (0.0, 99.0)}
    """
    out = {}
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        name, sep, rest = item.rpartition(":")
        column, sep2, lo = name.rpartition(":")
        if not (sep and sep2 and column):
            raise ValueError(f"bounds: `{item}` is not COLUMN:LO:HI")
        out[column] = (float(lo), float(rest))
    return out or None


def _data_options(run: Any) -> dict:
    """The federation's data options (run config), as `Site.from_csv` takes them."""
    return {
        "target": _text(run, "target"),
        "sensitive": _text(run, "sensitive"),
        "bounds": parse_bounds(_text(run, "bounds")),
        "features": _list(run, "features"),
        "categorical": _list(run, "categorical"),
        "groups": _list(run, "groups"),
        "pos_label": _optional(run, "positive", str),
    }


def _basis_options(run: Any) -> dict:
    """The public basis every site shares (run config)."""
    return {
        "bandwidth": _optional(run, "bandwidth", float),
        "frequencies": _optional(run, "frequencies", int),
        "basis_seed": _optional(run, "basis-seed", int),
        "eta_model": _text(run, "eta-model", "auto"),
        "accounting": _text(run, "accounting", "strict"),
    }


def _site(context: Context) -> federated.Site:
    """The SuperNode's site: its own data and budget (node config).

    In a simulation: block `partition-id` of the run config's data at its budget.
    """
    node, run = context.node_config, context.run_config
    data, basis = _data_options(run), _basis_options(run)
    if "data" in node:
        path = Path(_text(node, "data"))
        if "epsilon" not in node:
            raise ValueError(
                f"node config: `epsilon` is required with `data` (a site sets its own budget; "
                f"node config keys: {sorted(node)})"
            )
        return federated.Site.from_csv(
            _text(node, "site") or path.stem,
            path,
            epsilon=float(node["epsilon"]),
            delta=_optional(node, "delta", float),
            **data,
            **basis,
        )
    if "partition-id" in node:
        return _simulated_site(int(node["partition-id"]), int(node["num-partitions"]), run)
    raise ValueError(
        "node config: give `data` (this site's CSV) and `epsilon` (flower-supernode "
        "--node-config 'data=\"A.csv\" epsilon=1.0')"
    )


def _simulated_site(part: int, parts: int, run: Any) -> federated.Site:
    """Block `part` of `parts` contiguous blocks of the run config's `data` (simulation)."""
    import pandas as pd

    frame = pd.read_csv(_text(run, "data"))
    lo, hi = part * len(frame) // parts, (part + 1) * len(frame) // parts
    block = frame.iloc[lo:hi].reset_index(drop=True)
    data = _data_options(run)
    target, sensitive = data.pop("target"), data.pop("sensitive")
    features = data.pop("features") or [c for c in block.columns if c not in (target, sensitive)]
    data.pop("categorical")
    return federated.Site(
        f"partition-{part}",
        block[features],
        block[target],
        block[sensitive],
        epsilon=float(run["epsilon"]),
        **data,
        **_basis_options(run),
    )


# -- the ClientApp: one site --------------------------------------------------------------

client_app = ClientApp()


def _reply(msg: Message, **values: str) -> Message:
    return Message(RecordDict({RECORD: ConfigRecord(values)}), reply_to=msg)


def _keep(context: Context, node: Any, site: str, round_name: str, transcript: str) -> None:
    """Record the release in the run's state (each round once) and in `ledger-dir`."""
    context.state[STATE] = ConfigRecord(
        {**dict(context.state.get(STATE, ConfigRecord({}))), round_name: transcript}
    )
    folder = _text(node, "ledger-dir")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        path = Path(folder) / f"{site}-run{context.run_id}-{round_name}.json"
        path.write_text(transcript, encoding="utf-8")


def _released(context: Context) -> dict:
    return dict(context.state.get(STATE, ConfigRecord({})))


def _site_step(msg: Message, context: Context, round_name: str) -> Message:
    """Run one round at this site; failures stay at the site (module docs)."""
    released = _released(context)
    try:
        if round_name in released:
            raise ValueError(f"{round_name} was released already in this run (once per run)")
        site = _site(context)
        payload = msg.content[RECORD]
        if round_name == "round1":
            run = _text(payload, "run") or None
            transcript = site.round1(run=run)
        else:
            if "round1" not in released:
                raise ValueError("round 2 before this site's round 1")
            site.resume(released["round1"])
            transcript = site.round2(_text(payload, "global"))
    except Exception as e:  # noqa: BLE001 - reported at the site, not to the server
        # The message may name rows or values of the site's data: it stays in the SuperNode's
        # log. The server learns only that this round failed at this node.
        log.error("dpfair site, %s: %s: %s", round_name, type(e).__name__, e)
        return _reply(msg, failed=f"{round_name} failed at the site (see the SuperNode's log)")
    _keep(context, context.node_config, site.name, round_name, transcript)
    return _reply(msg, transcript=transcript)


@client_app.query("round1")
def _round1(msg: Message, context: Context) -> Message:
    """Round 1 at this site: its transcript (private class proportions and estimators)."""
    return _site_step(msg, context, "round1")


@client_app.query("round2")
def _round2(msg: Message, context: Context) -> Message:
    """Round 2 at this site, under the server's broadcast: its transcript (noisy trees)."""
    return _site_step(msg, context, "round2")


# -- the ServerApp: aggregation, selection, the model file --------------------------------

server_app = ServerApp()


def _wait_for_nodes(grid: Grid, count: int, timeout: float) -> list:
    """The ids of `count` connected SuperNodes, waiting at most `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        nodes = sorted(grid.get_node_ids())
        if len(nodes) >= count:
            return nodes[:count]
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"{len(nodes)} of {count} sites connected after {timeout:.0f} s (run config "
                f"`sites`, `timeout`)"
            )
        time.sleep(0.5)


def _ask(grid: Grid, nodes: list, round_name: str, timeout: float, **values: str) -> list:
    """Send `query.<round_name>` to every node; their transcripts, in node order."""
    messages = [
        Message(RecordDict({RECORD: ConfigRecord(values)}), node, f"query.{round_name}")
        for node in nodes
    ]
    replies = {r.metadata.src_node_id: r for r in grid.send_and_receive(messages, timeout=timeout)}
    transcripts = []
    for node in nodes:
        reply = replies.get(node)
        if reply is None:
            raise RuntimeError(f"{round_name}: node {node} did not answer within {timeout:.0f} s")
        if reply.has_error():
            raise RuntimeError(f"{round_name}: node {node} failed: {reply.error.reason}")
        record = reply.content[RECORD]
        if "transcript" not in record:
            raise RuntimeError(f"{round_name}: node {node}: {_text(record, 'failed')}")
        transcripts.append(_text(record, "transcript"))
    return transcripts


def _say(text: str) -> None:
    """Progress in the run's log (`flwr run --stream`, `flwr log`): public values only."""
    print(f"dpfair server: {text}", flush=True)


@server_app.main()
def _main(grid: Grid, context: Context) -> None:
    """FDP-Fair's two rounds over the connected sites; writes the model file `model-out`."""
    run = context.run_config
    sites = int(run.get("sites", 3))
    timeout = float(run.get("timeout", 300))
    out = Path(_text(run, "model-out", "fdp-fair-model.json"))
    run_id = f"flower-run-{context.run_id}"
    nodes = _wait_for_nodes(grid, sites, timeout)
    _say(f"{len(nodes)} sites; round 1 (run id {run_id})")
    round1 = _ask(grid, nodes, "round1", timeout, run=run_id)
    global_ = federated.aggregate_round1(
        round1,
        run=run_id,
        max_site_rows=_optional(run, "max-site-rows", int),
        depth=_optional(run, "depth", int),
    )
    _say("round 1 checked and aggregated; round 2")
    round2 = _ask(grid, nodes, "round2", timeout, **{"global": global_})
    clf = federated.aggregate_round2(
        global_,
        round2,
        alpha=float(run.get("alpha", 0.1)),
        rho_star=float(run.get("rho-star", 0.03)),
        margin_z=float(run.get("margin-z", 1.645)),
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    clf.model_.save(str(out))
    total = clf.ledger_["total"]
    _say(
        f"wrote {out} (fdp-fair, {len(nodes)} sites; the worst site's spend: "
        f"ε = {total['epsilon']:.6g}, δ = {total['delta']:.3g})"
    )
