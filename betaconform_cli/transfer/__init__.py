"""Prior transfer: borrow strength from fitted source datasets when a target has only a few labels.

Pure core: no printing, no typer/rich; randomness through a numpy Generator. docs/TRANSFER.md explains the
method and its benchmark. Both methods start from the paper's transfer weight (eq. 14, `similarity`):

    lambda_i = log(r_i) * sigmoid(a * (CosSim(E0, Ei) - b)),

with index 0 the target itself, and the Table 5 ablations as settings.

- `paper` (`paper`): eq. 15, the lambda-weighted average of the EM mixture parameters, plug-in.
- `default` (ours, `core.transfer`): Bayesian model averaging of no transfer against the sources, in named steps:
  the prior that no source applies, read from eq. 14's sigmoid (`similarity.source_prior`); each source as it
  is (only for the target's own numbers of judges), between two, pooled, or its shape at the labels' location
  (`candidates`); the labels' evidence for each, against a no-transfer model as flexible as a source's
  shifted copies (`evidence`); the posterior-weighted estimate, held within
  `max_move` posterior standard deviations of the no-transfer estimate, and the pooled interval (`pooled`); the
  source table with each source's judge profile and Bayes factor, and whether any source applies (`result`).

Modules: settings (TransferSettings, settings_from_config), sources (Source, judge profiles), similarity (eq. 14),
candidates, evidence, pooled, paper (eq. 15), result (TransferResult, SourceWeight), core (transfer, transfer_many).
"""

from .candidates import (
    Candidates,
    Cells,
    beta_from_moments,
    build_candidates,
    shift_grid,
    shifted_cells,
    shifted_centres,
    shifted_mixture,
    source_centre,
    target_cells,
)
from .core import transfer, transfer_many
from .evidence import (
    Posterior,
    as_is_strengths,
    dirichlet_multinomial_log_ml,
    dirichlet_multinomial_log_ml_many,
    no_transfer_dirichlet_log_evidence,
    no_transfer_log_evidence,
    posterior_weights,
    prior_conflict,
    strength_prior,
)
from .paper import average_mixtures, paper_transfer
from .pooled import combined, limit_move
from .result import SourceWeight, TransferResult
from .settings import (
    CONFIG_KEYS,
    METHOD_DESCRIPTIONS,
    METHODS,
    NO_SOURCE_LEVEL,
    SIMILARITIES,
    SIZE_WEIGHTS,
    SOURCE_PRIORS,
    TransferSettings,
    settings_from_config,
)
from .similarity import SourcePrior, self_similarity, similarities, source_prior, text_match, transfer_weights
from .sources import (
    JudgeProfile,
    Source,
    check_embeddings,
    judge_counts,
    mixture_overdispersion,
    profile,
    same_judge_count,
)

__all__ = [
    "CONFIG_KEYS", "METHODS", "METHOD_DESCRIPTIONS", "NO_SOURCE_LEVEL", "SIMILARITIES", "SIZE_WEIGHTS", "SOURCE_PRIORS",
    "Candidates", "Cells", "JudgeProfile", "Posterior", "Source", "SourcePrior", "SourceWeight", "TransferResult",
    "TransferSettings", "as_is_strengths", "average_mixtures", "beta_from_moments", "build_candidates", "check_embeddings", "combined",
    "dirichlet_multinomial_log_ml", "dirichlet_multinomial_log_ml_many", "judge_counts", "limit_move",
    "mixture_overdispersion", "no_transfer_dirichlet_log_evidence", "no_transfer_log_evidence", "paper_transfer", "posterior_weights", "prior_conflict",
    "profile", "same_judge_count", "self_similarity", "settings_from_config", "shift_grid", "shifted_cells",
    "shifted_centres", "shifted_mixture", "similarities", "source_centre", "source_prior", "strength_prior", "target_cells",
    "text_match", "transfer", "transfer_many", "transfer_weights",
]
