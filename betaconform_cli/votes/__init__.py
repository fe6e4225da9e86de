"""The majority-vote error from every item's verdicts: labeled items and unlabeled ones (issue 17).

Input: the verdicts of N judges on every item (an int array items x judges of class codes, -1 = no verdict) and
gold for some items (-1 = unlabeled). The quantity is the one `fit` reports, over ALL items with a verdict: the
mean over items of the exact hypergeometric probability that k judges drawn from the item's own judges err (fewer
than half of them give the gold class; a tie, exactly half, is half an error). For k above an item's number of
judges, the labels-only mixture's posterior predictive fills the missing judges (as `fit` does).

The estimator ("vote split", docs/UNLABELED.md): an item's verdicts give its vote split: n verdicts, the largest
class holds m of them. If the gold class is the top class, S = m judges are correct; if not, S is the count of the
class that is gold. So the split leaves one unknown per item, whether the plurality is wrong, and

    P(plurality wrong | split j) = sigmoid(b0 + b1 x_j + offset_j + u_j),   x_j = (2m - n) / n

averaged over models by the labels' marginal likelihood; by default (issue 26) two: "flat" (offset 0, the logistic
in the margin) and "tempered" (P(wrong) = sigmoid(b0 + c L_j + u_j), L_j the log odds of a one-coin Dawid-Skene
model fitted to every item's verdicts, c ~ U(0, 1.5): c = 1 judges that err independently, c < 1 judges that share
errors, c = 0 a split that says nothing); issue 17's "folded" (a Beta-Binomial fitted to every item's split),
"agreement" (L_j as an offset) and "constant", and issue 26 round 2's "unanimous" (a step where all verdicts agree)
and "saturated" (each split its own P(wrong) around a common level) can be averaged too (`SplitPrior.models`), and
weighed by stacking their leave-one-label-out predictive densities instead (`SplitPrior.weighting`; measured, not
the default: docs/UNLABELED.md, "Issue 26, round 2"). Weak Gaussian priors on
(b0, b1) and a random effect u_j per split; the posterior is exact on a grid. Labeled items contribute their exact
error, unlabeled items their expected error under the posterior (a finite-population estimate). The interval comes
from posterior draws plus the unlabeled items' own Bernoulli outcomes (a normal approximation of their sum), so it
is an interval for the error on these items. When the judges agree no more than chance (a label-free one-sided
test, `agreement.agreement_z`) or too few labeled items could have a wrong plurality (`estimate._guard`), the
labels-only estimate (`fit.analyse`) is returned, and `method` says so.

Modules: `model` (the types), `patterns` (input checks, vote splits), `folded` (the folded Beta-Binomial),
`agreement` (the one-coin Dawid-Skene offsets), `posterior` (the grid posterior with a random effect per split),
`estimate` (the estimate, its guard, and `fit`'s entry point `analyse_with_votes`); issue 26 round 4's options, off by
default: `rectified` (a label-free prediction corrected by the labels) and `difficulty` (a one-coin model with random
item difficulty, the "difficulty" model); round 5's, off by default too: `model.Hyperprior` (the random effect's sd and
the prior widths integrated over a hyperprior), the "pseudo_bma" weighting and the "tempered_if_interchangeable"
estimator (`agreement.plurality_cochran`). Every public name is
importable from `betaconform_cli.votes`.
"""

from __future__ import annotations

from .estimate import MIN_LABELED_SPLITS, analyse_with_votes, estimate_errors, estimate_from_votes
from .model import DEFAULT_KS, METHOD_LABELS, METHOD_VOTES, Hyperprior, SplitModel, SplitPrior, VoteEstimate, VoteRow
from .patterns import Splits, class_counts, distinct_patterns

__all__ = [
    "DEFAULT_KS",
    "Hyperprior",
    "METHOD_LABELS",
    "METHOD_VOTES",
    "MIN_LABELED_SPLITS",
    "SplitModel",
    "SplitPrior",
    "Splits",
    "VoteEstimate",
    "VoteRow",
    "analyse_with_votes",
    "class_counts",
    "distinct_patterns",
    "estimate_errors",
    "estimate_from_votes",
]
