"""`judges`: which judges, and how many. Per-judge accuracy, shared mistakes, and the ensemble to run for each
size k with an honest estimate of its majority-vote error (docs/JUDGES.md). Pure core: no printing."""

from .analysis import Search, analyse_judges, default_ks, rescore, search_ensembles
from .descriptive import cochran_q, pair_table, wilson_interval
from .gold import Agreement, votes_agreement
from .model import ClassPosterior, ModelSettings, sample_posterior
from .results import (
    CostChoice,
    EnsembleRow,
    Exchangeability,
    JudgeRow,
    JudgesResult,
    JudgesSettings,
    NamedEnsemble,
    PairRow,
)

__all__ = [
    "Agreement",
    "ClassPosterior",
    "CostChoice",
    "EnsembleRow",
    "Exchangeability",
    "JudgeRow",
    "JudgesResult",
    "JudgesSettings",
    "ModelSettings",
    "NamedEnsemble",
    "PairRow",
    "Search",
    "analyse_judges",
    "cochran_q",
    "default_ks",
    "pair_table",
    "rescore",
    "search_ensembles",
    "votes_agreement",
    "sample_posterior",
    "wilson_interval",
]
