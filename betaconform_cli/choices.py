"""Every option's closed list of values that the core checks: read by the core's checks and by the CLI's choices
(cli/options.py: a `Literal` of each tuple) alike, from here, because this module is light (the modules that use
them import scipy, which the CLI loads only when a command computes). `estimators.METHODS` and `gate.GATE_ON`,
`gate.SCORE_ON` live with their registries."""

from __future__ import annotations

COMPONENTS: tuple[int | str, ...] = (1, 2, 3, "auto")  # fit's --components
RULES = ("conformal", "variance", "precision")  # stopping rules
PRECISION_METHODS = ("calibrated", "sequential")  # the precision rule's interval
SCORE_TARGETS = ("set", "new")  # score's interval: these items' pass rate, or new items'
TRANSFER_METHODS = ("default", "paper")
SIZE_WEIGHTS = ("log", "linear")  # eq. 14's size term
SLICE_ADJUSTMENTS = ("holm", "bh", "none")  # --by's multiplicity: Holm (family-wise), Benjamini-Hochberg (FDR), none
JUDGES_CSV_TABLES = ("ensembles", "agreement")  # judges -f csv: the ensembles of each size, or each judge against the gold
SIMILARITIES = ("cosine", "inverse-euclidean")
