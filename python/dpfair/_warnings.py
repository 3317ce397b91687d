"""dpfair's warning classes.

A result weak in a way its released values show, or a spend that nothing counts.
"""


class PrivacyWarning(UserWarning):
    """A private fit's result is weak in a way its released values show (dpfair's warnings)."""


class BoundsWarning(PrivacyWarning):
    """The fit's private feature bounds had too little ε per column to be reliable.

    The fit went on (columns may end up squashed or clipped; the held-out check then compares
    the model with a constant); public `bounds=` for those columns avoid it.
    """


class ConstantModelWarning(PrivacyWarning):
    """The held-out check replaced the fitted model by a constant (`constant_` says which)."""


class FairnessWarning(PrivacyWarning):
    """The fit's own private estimate of its fairness measure misses its target."""


class BudgetWarning(PrivacyWarning):
    """Fits whose privacy losses add up with nothing to count them (no `PrivacySession`)."""
