"""`evaluate`: the paper's accuracy experiments on fully labeled judge data.

Fixed-r mode (fixed_r.py; the paper's figures 3-4 and the accuracy tables of METHOD.md): for each dataset and
each number of labeled items r, `runs` paired random draws of r items *without replacement*; on every draw every
estimator is fitted on the same items and compared with the whole dataset's actual error (exact hypergeometric,
`mixtures.empirical_errors`). The error margin of a draw is `mixtures.error_margin`: the mean over odd k (those k for which
the actual error is defined) of |estimate - actual|. A dataset with fewer than r + 1 items is skipped at that r
(a draw of all items would have no sampling error) and listed in `Evaluation.skipped`.

Estimators (`ESTIMATORS`): default (fit's estimate, with its interval: coverage and width are reported for it),
plugin (the MAP mixture of the same fit), paper (the paper's EM as printed), binomial, beta_binomial (a single
Beta-Binomial), empirical (the drawn items' own exact majority error).

Randomness: draw `run` of dataset `name` at size r uses `numpy.random.default_rng([seed, crc32(name), r, run])`
for the draw, the fit's random starts and the interval, so a dataset's numbers do not depend on which other
datasets or sizes are evaluated with it.

Adaptive mode (adaptive.py; the paper's Tables 1 and 3, Fig. 6): each run labels the dataset in a random order
until a stopping rule fires, then the same estimators. Transfer mode (leave_one_out.py; Table 2): leave-one-out
inside each group of datasets, no transfer against the default and the paper's transfer. Results (results.py)
are frozen; their tables live in report/evaluate.py.
"""

from .adaptive import evaluate_adaptive, rule_grid
from .fixed_r import evaluate
from .leave_one_out import TransferData, check_transfer_cells, evaluate_transfer
from .results import AverageRow, Cell, Evaluation, MethodSummary, Skipped
from .settings import ESTIMATORS, MARGIN_DEFINITION, TRANSFER_METHODS, EvaluateSettings

__all__ = ["ESTIMATORS", "MARGIN_DEFINITION", "TRANSFER_METHODS", "AverageRow", "Cell",
           "EvaluateSettings", "Evaluation", "MethodSummary", "Skipped", "TransferData", "check_transfer_cells", "evaluate",
           "evaluate_adaptive", "evaluate_transfer", "rule_grid"]
