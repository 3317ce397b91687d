"""FDP-Fair's two-round protocol (Xue & Yu, Algorithm 1), one step at a time.

The same steps as `dpfair federated site|aggregate round1|round2`, on Python data, with the
same transcripts (JSON text, byte for byte what the CLI writes), so Python sites, CLI sites and
the Flower apps (`dpfair.flower`) can take part in one run.

* A `Site` holds one site's data, its budget (ε_s, δ_s) and its ledger. `round1()` releases its
  private class proportions and kernel estimators of a random half of its rows; `round2(global_)`
  releases two noisy trees of counts of the other half. Each release is charged to the site's
  ledger (in the transcript) before the transcript is returned; the noise comes from the OS.
* `aggregate_round1(transcripts)` (the server) checks every transcript and returns the broadcast;
  `aggregate_round2(global_, transcripts, alpha=...)` runs Algorithm 2's selection and returns
  the fitted model (an `FDPFairClassifier`; `save` writes the file `dpfair predict` reads).

The server never sees rows: only what the transcripts carry (docs/federated-trust.md).

Example:
    >>> import numpy as np
    >>> from dpfair import federated
    >>> rng = np.random.default_rng(0)
    >>> def site_data(n):
    ...     X = rng.uniform(size=(n, 2)); g = rng.choice(["a", "b"], size=n)
    ...     return X, (X[:, 0] + 0.2 * (g == "b") > 0.6).astype(int), g
    >>> sites = [federated.Site(f"s{i}", *site_data(1500), epsilon=1.0, frequencies=32,
    ...                         bandwidth=0.2, bounds={"x0": (0, 1), "x1": (0, 1)})
    ...          for i in range(3)]
    >>> global_ = federated.aggregate_round1([s.round1(run="demo") for s in sites], run="demo")
    >>> clf = federated.aggregate_round2(global_, [s.round2(global_) for s in sites], alpha=0.1)
    >>> X, _, g = site_data(20)
    >>> clf.predict(X, sensitive_features=g).shape
    (20,)
    >>> [round(s.spent()["epsilon"], 6) for s in sites]
    [1.0, 1.0, 1.0]

"""

from __future__ import annotations

import json
from typing import Any

from dpfair import _native
from dpfair._input import _label_text, to_frame

__all__ = ["Site", "aggregate_round1", "aggregate_round2", "fitted", "transcript_spend"]


def _bounds_list(bounds: dict | None) -> list | None:
    if bounds is None:
        return None
    if not isinstance(bounds, dict):
        raise TypeError(f"bounds must be a dict {{column: (lo, hi)}}, got {type(bounds).__name__}")
    return [(str(c), float(lo), float(hi)) for c, (lo, hi) in bounds.items()]


def _texts(levels: Any) -> list | None:
    return None if levels is None else [_label_text(v) for v in levels]


class Site:
    """One site of an FDP-Fair federation: its rows, its budget and its ledger.

    `X`, `y`, `sensitive_features` as for an estimator's `fit` (numpy, pandas, polars, Arrow;
    `sensitive_features` may name a column of X), or `Site.from_csv` for a file read as
    `dpfair federated site --data` reads it. `epsilon` is ε_s, spent once per round on disjoint
    halves of the rows (parallel composition: the site's guarantee is (ε_s, δ_s)); `delta`
    defaults to (N_s/2)⁻². `bounds` are the federation's public feature bounds
    `{column: (lo, hi)}` (every site must use the same; features are scaled to [0, 1]).
    `bandwidth`, `frequencies`, `basis_seed`, `eta_model` fix the public basis every site must
    share (unset: the public rules on this site's size). `insecure_seed` makes the release noise
    reproducible: tests only, the ledger then says the run is not private.
    """

    def __init__(
        self,
        name: str,
        X: Any = None,
        y: Any = None,
        sensitive_features: Any = None,
        *,
        epsilon: float,
        delta: float | None = None,
        accounting: str = "strict",
        bounds: dict | None = None,
        bandwidth: float | None = None,
        frequencies: int | None = None,
        basis_seed: int | None = None,
        eta_model: str = "auto",
        pos_label: Any = None,
        groups: list | None = None,
        classes: list | None = None,
        insecure_seed: int | None = None,
        data: Any = None,
    ) -> None:
        self.name = str(name)
        if data is None:
            data = _native.SiteData.from_frame(
                to_frame(X, y, sensitive_features),
                bounds=_bounds_list(bounds),
                positive=None if pos_label is None else _label_text(pos_label),
                groups=_texts(groups),
                classes=_texts(classes),
            )
        self._data = data
        self.epsilon = float(epsilon)
        self.delta = delta
        self.accounting = accounting
        self._basis = {
            "bandwidth": bandwidth,
            "frequencies": frequencies,
            "basis_seed": basis_seed,
            "eta_model": eta_model,
        }
        self._seed = insecure_seed
        # The transcripts this site released, by round (`round1`, `round2`): its ledger.
        self._transcripts: dict = {}

    @classmethod
    def from_csv(
        cls,
        name: str,
        path: Any,
        *,
        target: str,
        sensitive: str,
        bounds: dict | None = None,
        features: list | None = None,
        categorical: list | None = None,
        drop: list | None = None,
        pos_label: Any = None,
        groups: list | None = None,
        classes: list | None = None,
        **options: Any,
    ) -> Site:
        """A site whose rows are the CSV file `path`, read as the CLI reads `--data`.

        `target`, `sensitive`, `features`, `categorical`, `drop`, `groups`, `classes`,
        `pos_label` and `bounds` are the CLI's `--target`, `--sensitive`, … ; `options` are
        `Site`'s (`epsilon`, `delta`, `bandwidth`, …).
        """
        data = _native.SiteData.from_csv(
            str(path),
            target,
            sensitive,
            bounds=_bounds_list(bounds),
            features=features,
            categorical=list(categorical or []),
            drop=list(drop or []),
            positive=None if pos_label is None else _label_text(pos_label),
            groups=_texts(groups),
            classes=_texts(classes),
        )
        return cls(name, data=data, **options)

    @property
    def n_rows(self) -> int:
        """N_s, the site's number of rows (public under replace-one neighbours)."""
        return self._data.n_rows

    def round1(self, run: str | None = None) -> str:
        """Release this site's round-1 statistics; the transcript (JSON) to send to the server.

        `run` is the run id the server announced (transcripts of another run are refused).
        A site releases round 1 once: a second call is refused (it would spend ε_s again).
        """
        if "round1" in self._transcripts:
            raise ValueError(f"site {self.name}: round 1 was released already (once per run)")
        text = _native.site_round1(
            self._data,
            self.name,
            self.epsilon,
            delta=self.delta,
            accounting=self.accounting,
            run=run,
            insecure_seed=self._seed,
            **self._basis,
        )
        self._transcripts["round1"] = text
        return text

    def round2(self, global_: str) -> str:
        """Release this site's round-2 trees under the server's broadcast `global_` (JSON).

        Refused before round 1, and a second time (each would spend ε_s again).
        """
        if "round1" not in self._transcripts:
            raise ValueError(f"site {self.name}: round 2 needs this site's round 1 first")
        if "round2" in self._transcripts:
            raise ValueError(f"site {self.name}: round 2 was released already (once per run)")
        text = _native.site_round2(
            global_,
            self._data,
            self.name,
            self.epsilon,
            delta=self.delta,
            accounting=self.accounting,
            round1_json=self._transcripts["round1"],
            insecure_seed=self._seed,
        )
        self._transcripts["round2"] = text
        return text

    def resume(self, round1: str) -> None:
        """Take back this site's own round-1 transcript, kept by the site between rounds.

        For a site that runs round 2 in another process (a Flower ClientApp, a restart):
        `round2` then refuses a broadcast that does not hand back this round 1's split seed.
        """
        if self._transcripts:
            raise ValueError(f"site {self.name}: has released already; nothing to resume")
        self._transcripts["round1"] = round1

    def ledgers(self) -> dict:
        """The site's ledgers by round (`round1`, `round2`): every release it made (JSON)."""
        return {r: json.loads(t)["ledger"] for r, t in self._transcripts.items()}

    def spent(self) -> dict:
        """What this site has spent so far: `{"epsilon", "delta"}`.

        The worst of its rounds: the rounds read disjoint halves of its rows (parallel
        composition).
        """
        totals = [transcript_spend(t) for t in self._transcripts.values()]
        return {
            "epsilon": max((t[0] for t in totals), default=0.0),
            "delta": max((t[1] for t in totals), default=0.0),
        }


def transcript_spend(transcript: str) -> tuple:
    """`(ε, δ)` the releases of a transcript (JSON) cost its site, by its own ledger."""
    return tuple(_native.transcript_spend(transcript)[:2])


def aggregate_round1(
    transcripts: list,
    *,
    run: str | None = None,
    max_site_rows: int | None = None,
    depth: int | None = None,
    depth_rule: str = "code",
    weights: str = "paper",
) -> str:
    """The server's round 1: check every site's transcript, average, broadcast (JSON).

    Refuses (ValueError naming the site) a transcript that fails a check of
    docs/federated-trust.md, before any site spends its round-2 budget.
    """
    return _native.aggregate_round1_json(
        list(transcripts),
        run=run,
        max_site_rows=max_site_rows,
        depth=depth,
        depth_rule=depth_rule,
        weights=weights,
    )


def aggregate_round2(global_: str, transcripts: list, *, alpha: float = 0.1, **search: Any) -> Any:
    """The server's round 2: Algorithm 2's selection of τ̃; the fitted `FDPFairClassifier`.

    `search` takes `rho_star`, `band`, `margin_z`, `straddle`, `c_omega`, `eta_tol`,
    `monotoniser`, `clip`, `zero_within_band`, `clip_tails` (as `dpfair federated aggregate
    round2`). The
    model's ledger holds every site's releases; `clf.model_.save(path)` writes the file
    `dpfair predict` reads.
    """
    model = _native.aggregate_round2_json(global_, list(transcripts), alpha=alpha, **search)
    return fitted(model)


def fitted(model: Any) -> Any:
    """A model file of the protocol (`_native.Model`) as a fitted `FDPFairClassifier`."""
    from dpfair.estimators import FDPFairClassifier

    clf = FDPFairClassifier(alpha=None)
    clf._set_fitted(model, None)
    clf.n_features_in_ = len(model.feature_columns)
    return clf
