"""`Ledger`: a privacy ledger as a dict, printed as the CLI's readable summary."""

from __future__ import annotations

import json
from typing import Any


class Ledger(dict):
    """Every release a fit (or a session) made, and their total.

    A dict with keys `entries` (one dict per release: label, cost, mechanism), `total`
    (`{"epsilon": ..., "delta": ...}`), `relation` (the neighbouring relation certified, in
    words), `private` (False when the noise was seeded: not private), `certified` (False when
    an entry is an approximation, e.g. the GDP accountant) and `budget`. `str(ledger)` is the
    summary `dpfair ledger` prints.

    """

    def __init__(self, native: Any) -> None:
        raw = json.loads(native.ledger_json())
        epsilon, delta, relation, private, certified, rule, summary = native.ledger_total()
        super().__init__(
            entries=raw.get("entries", []),
            total={"epsilon": epsilon, "delta": delta, "rule": rule},
            budget=raw.get("budget"),
            relation=relation,
            private=private,
            certified=certified,
        )
        self._summary = summary

    def __str__(self) -> str:
        return self._summary

    def __repr__(self) -> str:
        t = self["total"]
        return (
            f"Ledger(ε={t['epsilon']:.6g}, δ={t['delta']:.6g}, {len(self['entries'])} entries, "
            f"{self['relation']}{'' if self['private'] else ', NOT PRIVATE'})"
        )
