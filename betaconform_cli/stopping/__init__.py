"""Adaptive stopping: when have enough items been labeled?

rules.py (the three rules and Proposition 4.1), sequences.py (confidence sequences and calibrated intervals),
live.py (a decision on the items labeled so far, the next items to label), replay.py (the rule replayed on a
fully labeled pool).
"""

from .live import Decision, check_ids, check_labeled_in_pool, decide, next_items
from .replay import ReplayRun, replay_one, summarize
from .rules import (
    RULES,
    ConformalRule,
    PrecisionRule,
    Rule,
    RulePath,
    VarianceRule,
    fitted_centres,
    make_rule,
    rule_path,
    theoretical_samples,
)
from .sequences import calibrated_half_width, confidence_sequence

__all__ = ["RULES", "ConformalRule", "Decision", "PrecisionRule", "ReplayRun", "Rule", "RulePath", "VarianceRule",
           "calibrated_half_width", "check_ids", "check_labeled_in_pool", "confidence_sequence", "decide",
           "fitted_centres", "make_rule", "next_items", "replay_one", "rule_path", "summarize", "theoretical_samples"]
