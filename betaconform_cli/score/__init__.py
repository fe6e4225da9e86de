"""`score`, in one package (issue 28: a room per concept): the evaluated system's pass rate corrected for the judges'
bias with a few gold labels.

- estimator.py: the estimator (PPI++ with a cross-fitted prediction, eqs. 1-6; `score`, `score_votes`,
  `compare_scores`) and its typed results (`ScoreResult`, `ComparisonResult`);
- two_class.py: the judges' two-class Dawid-Skene model (the one model of betaconform_cli.dawid_skene) and majority;
- latent_classes.py: the latent-class prediction (eq. 5);
- ppi.py: the estimator's pieces (lambda, residual variance, intervals, the move of eq. 4);
- strata.py: the items no judge gave a verdict on (eqs. 7-10);
- document.py: the documents (docs/schema/score.json), computed from the typed results.

The estimator's names are the package's (`from betaconform_cli.score import score`)."""

from ..choices import SCORE_TARGETS as TARGETS
from .estimator import (
    METHOD,
    METHOD_LABELS_ONLY,
    POSITIVE_NAMES,
    TARGET_TEXT,
    ComparisonResult,
    ScoreModels,
    ScoreResult,
    ScoreSizes,
    align_items,
    binarize,
    check_options,
    compare_scores,
    resolve_positive,
    score,
    score_votes,
)
from .ppi import wilson_fpc
from .two_class import JudgeModel, fit_dawid_skene, majority

__all__ = ["METHOD", "METHOD_LABELS_ONLY", "POSITIVE_NAMES", "TARGETS", "TARGET_TEXT", "ComparisonResult", "JudgeModel",
           "ScoreModels", "ScoreResult", "ScoreSizes", "align_items", "binarize", "check_options", "compare_scores",
           "fit_dawid_skene", "majority", "resolve_positive", "score", "score_votes", "wilson_fpc"]
