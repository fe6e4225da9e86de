"""Make the small synthetic datasets in sample_data/ (deterministic: run it again and nothing changes).

Each dataset draws a per-item judge accuracy p from a Beta mixture, then each judge's verdict is correct
with probability p (so the number correct S is a Beta-Binomial mixture). The generating mixtures:

| file                     | shape           | items | judges | mixture (weight: Beta(alpha, beta))          |
|--------------------------|-----------------|-------|--------|----------------------------------------------|
| qa_judges.jsonl          | list of 1/0     | 120   | 11     | 0.25: Beta(1.2, 5) + 0.75: Beta(9, 1.2)      |
| code_review.jsonl        | object by judge | 80    | 7      | 0.40: Beta(2, 3) + 0.60: Beta(12, 2); ~5% null |
| pairwise_verdicts.jsonl  | verdicts+label  | 60    | 9      | 0.30: Beta(1, 3) + 0.70: Beta(6, 1.5)        |
| counts_only.jsonl        | correct/judges  | 200   | 5-11   | 1.00: Beta(6, 2) (a single Beta-Binomial)    |

system_verdicts.jsonl and system_b_verdicts.jsonl (`score`): two evaluated systems' answers to the same 150
prompts (ids sys-000 ...), each answer judged pass/fail by 7 named judges that are lenient (they pass 5-35% of the
failing answers and fail 5-20% of the passing ones, and a hard tenth of the answers fools most of them), a human
"label" on the first 40 items only (the rest unlabeled), and a "prompt" id shared by three answers each (a cluster
of samples of one prompt). System a passes with probability 0.65, b with 0.55. Drawn with their own seed, so the
files above do not change.

Usage: python sample_data/make_sample_data.py [OUT_DIR]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

TOPICS = {
    "qa_judges": (
        "Is this answer to the trivia question correct?",
        ["the capital of Australia", "the boiling point of water at altitude", "who wrote Middlemarch",
         "the speed of light in fibre", "the year the Berlin Wall fell", "the largest moon of Saturn"],
    ),
    "code_review": (
        "Does this patch fix the bug without breaking the tests?",
        ["an off-by-one in a pagination helper", "a race in a connection pool", "a null check in a parser",
         "a unicode bug in a slug function", "an integer overflow in a checksum", "a leaked file handle"],
    ),
    "pairwise_verdicts": (
        "Which response follows the instruction better, A or B?",
        ["a recipe rewritten for children", "a polite refusal email", "a haiku about autumn",
         "a summary of a news article", "a SQL query explanation", "travel tips for Lisbon"],
    ),
    "counts_only": (
        "Is the summary faithful to the source document?",
        ["a quarterly earnings call", "a court ruling", "a product review", "a medical leaflet"],
    ),
}


def draw_p(rng: np.random.Generator, n: int, weights: list[float], alphas: list[float], betas: list[float]) -> np.ndarray:
    comp = rng.choice(len(weights), size=n, p=weights)
    return rng.beta(np.asarray(alphas)[comp], np.asarray(betas)[comp])


def text(rng: np.random.Generator, name: str, i: int) -> str:
    question, subjects = TOPICS[name]
    return f"{question} Item {i}: {subjects[int(rng.integers(len(subjects)))]}."


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(20261126)

    rows = []
    for i, p in enumerate(draw_p(rng, 120, [0.25, 0.75], [1.2, 9.0], [5.0, 1.2])):
        judgments = [int(v) for v in rng.random(11) < p]
        rows.append({"id": f"qa-{i:03d}", "text": text(rng, "qa_judges", i), "judgments": judgments})
    write(out / "qa_judges.jsonl", rows)

    judges = ["gpt-4o", "claude-3.5", "llama-3-70b", "qwen-2.5-72b", "gemini-1.5", "mistral-large", "command-r"]
    rows = []
    for i, p in enumerate(draw_p(rng, 80, [0.4, 0.6], [2.0, 12.0], [3.0, 2.0])):
        verdicts: dict[str, int | None] = {}
        for j in judges:
            verdicts[j] = None if rng.random() < 0.05 else int(rng.random() < p)
        if all(v is None for v in verdicts.values()):
            verdicts[judges[0]] = int(rng.random() < p)
        rows.append({"id": f"cr-{i:03d}", "text": text(rng, "code_review", i), "judgments": verdicts})
    write(out / "code_review.jsonl", rows)

    rows = []
    for i, p in enumerate(draw_p(rng, 60, [0.3, 0.7], [1.0, 6.0], [3.0, 1.5])):
        label = "A" if rng.random() < 0.5 else "B"
        wrong = "B" if label == "A" else "A"
        verdicts_list = [label if rng.random() < p else wrong for _ in range(9)]
        rows.append({"id": f"pw-{i:03d}", "text": text(rng, "pairwise_verdicts", i), "verdicts": verdicts_list, "label": label})
    write(out / "pairwise_verdicts.jsonl", rows)

    rows = []
    for i, p in enumerate(draw_p(rng, 200, [1.0], [6.0], [2.0])):
        k = int(rng.integers(5, 12))
        rows.append({"id": f"co-{i:03d}", "text": text(rng, "counts_only", i), "correct": int(rng.binomial(k, p)), "judges": k})
    write(out / "counts_only.jsonl", rows)

    systems(out)


SYSTEM_JUDGES = ["gpt-4o", "claude-3.5", "llama-3-70b", "qwen-2.5-72b", "gemini-1.5", "mistral-large", "command-r"]


def systems(out: Path) -> None:
    """Two evaluated systems, verdicts of 7 lenient judges on every answer, gold on the first 40 (module docstring)."""
    rng = np.random.default_rng(20261127)
    n, labeled = 150, 40
    false_pass = rng.uniform(0.05, 0.35, len(SYSTEM_JUDGES))  # lenient: a failing answer passes
    false_fail = rng.uniform(0.05, 0.20, len(SYSTEM_JUDGES))
    for name, rate in (("system_verdicts", 0.65), ("system_b_verdicts", 0.55)):
        rows = []
        for i in range(n):
            gold = bool(rng.random() < rate)
            hard = rng.random() < 0.1  # most judges are fooled together
            verdicts = {}
            for j, judge in enumerate(SYSTEM_JUDGES):
                wrong = rng.random() < (0.7 if hard else (false_fail[j] if gold else false_pass[j]))
                verdicts[judge] = "pass" if gold != wrong else "fail"
            row: dict[str, object] = {"id": f"sys-{i:03d}", "prompt": f"p-{i // 3:02d}", "verdicts": verdicts}
            if i < labeled:
                row["label"] = "pass" if gold else "fail"
            rows.append(row)
        write(out / f"{name}.jsonl", rows)


def write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent)
