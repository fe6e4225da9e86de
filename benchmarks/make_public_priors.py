"""Fit shipped priors (configs/priors/) from public judge datasets beyond ../shared/data.

Each dataset is read from a pinned commit of a public GitHub repository, converted to the project's JSONL
shape ({"id", "text", "judgments": [1/0 per judge]}) in a scratch folder OUTSIDE the repository, and fitted
with the one code path of benchmarks/make_priors.py (`fit FILE --save OUT --embed`, default method, seed 0),
so each YAML holds only the fitted mixture, the (judges, correct) histogram, the error table and the mean
all-MiniLM-L6-v2 embedding, plus a `provenance` block. Never items, texts or verdicts.

SNAPSHOTS is a folder holding one git repository per source, as `<owner>+<name>` (a clone, a bare clone, or
the `repo` git dir that the project's snapshot fetcher leaves there) or `<owner>/<name>`; the script reads
the pinned commit with `git show`, so the checked-out state does not matter. A missing repository or
commit skips that source with a message; no SNAPSHOTS at all skips cleanly (exit 0).

    git clone --bare https://github.com/princeton-nlp/LLMBar SNAPSHOTS/princeton-nlp+LLMBar   # and the others
    .venv/bin/python benchmarks/make_public_priors.py SNAPSHOTS [--jsonl-dir DIR] [--only PREFIX]

How each source's correctness is computed is written into its `provenance.note` and into
configs/priors/README.md. The LLMBar reader is checked against the shipped ChatGPT prior: rebuilding
llmbar_chatgpt_natural from the same commit must give the histogram configs/priors/ already holds.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import string
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_priors import PRIORS, ROOT, write_prior  # noqa: E402

csv.field_size_limit(1 << 26)

COMMITS = {
    "princeton-nlp/LLMBar": "900616bff90b6c6c8e1681f7d079250637c55992",
    "UMass-Meta-LLM-Eval/llm_eval": "7c0bf28e75703cd41c6088bebb64eefcdf348bd4",
    "ehsk/OpenQA-eval": "8b9317d0f0c92b52e1c71c0168dff74b5f76a5f4",
    "paul-rottger/exaggerated-safety": "d7bb5bd738c1fcbc36edd83d5e7d1b71a3e2d84d",
    "bcdnlp/PRD": "35fb99e5d5c7a2f3535811f1edbe417da7563957",
}

AGGREGATES_ONLY = "only aggregate statistics are shipped (histogram, fitted mixture, mean embedding); no item, text or verdict"


@dataclass(frozen=True)
class PublicDataset:
    """One dataset ready to fit: its items in the project's JSONL shape and its provenance block."""

    name: str
    items: list[dict[str, Any]]
    provenance: dict[str, Any]
    source: str


class Snapshot:
    """One pinned commit of a repository, read with `git show` (no work tree needed)."""

    def __init__(self, git_dir: Path, repo: str, commit: str):
        self.git_dir, self.repo, self.commit = git_dir, repo, commit

    @classmethod
    def find(cls, root: Path, repo: str) -> Snapshot | None:
        owner, name = repo.split("/")
        commit = COMMITS[repo]
        for base in (root / f"{owner}+{name}" / "repo", root / f"{owner}+{name}", root / owner / name):
            git_dir = base / ".git" if (base / ".git").exists() else base
            if not (git_dir / "HEAD").exists():
                continue
            ok = subprocess.run(
                ["git", "--git-dir", str(git_dir), "cat-file", "-e", f"{commit}^{{commit}}"], capture_output=True, check=False
            )
            if ok.returncode == 0:
                return cls(git_dir, repo, commit)
        return None

    def _git(self, *args: str) -> bytes:
        return subprocess.run(["git", "--git-dir", str(self.git_dir), *args], capture_output=True, check=True).stdout

    def text(self, path: str) -> str:
        return self._git("show", f"{self.commit}:{path}").decode("utf-8")

    def json(self, path: str) -> Any:
        return json.loads(self.text(path))

    def jsonl(self, path: str) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.text(path).splitlines() if line.strip()]

    def csv(self, path: str, delimiter: str = ",") -> list[dict[str, str]]:
        return list(csv.DictReader(io.StringIO(self.text(path)), delimiter=delimiter))

    def files(self, prefix: str) -> list[str]:
        out = self._git("ls-tree", "-r", "--name-only", self.commit, prefix).decode("utf-8")
        return out.split("\n")[:-1]

    def where(self, paths: str) -> str:
        return f"{self.repo} @ {self.commit}, {paths}"


def pair_text(instruction: str, a: str, b: str) -> str:
    """The shape of ../shared/data's pairwise items: the instruction, then both outputs."""
    return f"{instruction}\n\nOutput (a): {a}\n\nOutput (b): {b}"


# --- LLMBar: other LLM evaluators, and its human-labelled pairwise sets ---------------------------------

LLMBAR_GROUPS = {
    "natural": ["Natural"],
    "adversarial": ["Adversarial/Neighbor", "Adversarial/GPTInst", "Adversarial/GPTOut", "Adversarial/Manual"],
}
LLMBAR_LLMS = {"GPT-4": "gpt4", "PaLM2": "palm2", "LLaMA2": "llama2", "Falcon": "falcon"}
LLMBAR_NOTE = (
    "one LLM judge under every prompting strategy LLMBar released for it, presentation order as given (swap = False); "
    "a verdict is correct when its winner equals the gold label; an unparsable or tied verdict counts as incorrect"
)
LLMBAR_LICENCE = "MIT licence (princeton-nlp/LLMBar)"


def _strategies(snap: Snapshot, subset: str, llm: str) -> set[str]:
    prefix = f"Dataset/{subset}/evaluators/{llm}/"
    return {p[len(prefix):].split("/")[0] for p in snap.files(prefix) if p.endswith("/result.json")}


def _winner(results: list[Any]) -> str | None:
    """The swap = False verdict; Metrics strategies put their generated metrics before it in the list."""
    last = next(x for x in reversed(results) if isinstance(x, dict) and "swap = False" in x)
    winner = last["swap = False"].get("winner")
    return None if winner is None else str(winner)


def _llmbar_items(snap: Snapshot, subset: str, judges: list[tuple[str, str]]) -> Iterator[dict[str, Any]]:
    """Items of one LLMBar-format folder; judges are (LLM, strategy) pairs, each read at swap = False."""
    data = snap.json(f"Dataset/{subset}/dataset.json")
    verdicts = []
    for llm, strategy in judges:
        res = snap.json(f"Dataset/{subset}/evaluators/{llm}/{strategy}/result.json")
        if len(res) != len(data) or any(r["input"] != d["input"] or r["label"] != d["label"] for r, d in zip(res, data)):
            raise ValueError(f"{subset} {llm}/{strategy}: result.json does not follow dataset.json")
        verdicts.append([_winner(r["results"]) for r in res])
    for i, d in enumerate(data):
        judgments = [int(v[i] == str(d["label"])) for v in verdicts]
        yield {"id": f"{subset}-{i}", "text": pair_text(d["input"], d["output_1"], d["output_2"]), "judgments": judgments}


def llmbar_evaluators(snap: Snapshot) -> list[PublicDataset]:
    out = []
    for llm, short in LLMBAR_LLMS.items():
        subsets = [s for group in LLMBAR_GROUPS.values() for s in group]
        strategies = sorted(set.intersection(*(_strategies(snap, f"LLMBar/{s}", llm) for s in subsets)))
        judges = [(llm, s) for s in strategies]
        for group, members in LLMBAR_GROUPS.items():
            items = [it for s in members for it in _llmbar_items(snap, f"LLMBar/{s}", judges)]
            where = snap.where(f"Dataset/LLMBar/{{{','.join(members)}}}/{{dataset.json, evaluators/{llm}/<strategy>/result.json}}")
            out.append(PublicDataset(f"llmbar_{short}_{group}", items, {
                "collection": f"llmbar-{llm}",
                "benchmark": "llmbar",
                "domain": "pairwise instruction-following judging" + (" (adversarial subsets pooled)" if group != "natural" else ""),
                "kind": "pairwise-preference",
                "source": where,
                "licence": LLMBAR_LICENCE,
                "judges": [f"{llm}/{s}/swap=False" for s in strategies],
                "note": LLMBAR_NOTE,
            }, where))
    return out


LLMBAR_PANEL = {  # LLMBar's Processed folders: pairwise sets whose gold label is a human preference
    "MT-Bench": ("mtbench", "mt-bench", "MT-Bench human pairwise judgments (lmsys, CC-BY-4.0), ties removed by LLMBar"),
    "FairEval": ("faireval", "vicuna80", "FairEval (Wang et al. 2023): Vicuna-80 questions, ChatGPT vs Vicuna-13B answers"),
    "LLMEval^2": ("llmeval2", "llmeval2", "LLMEval^2 (Zhang et al. 2023) human preferences"),
}
PANEL_LLMS = ["ChatGPT", "GPT-4", "LLaMA2", "PaLM2"]
PANEL_STRATEGIES = ["Metrics_Reference", "Vanilla_NoRules"]


def llmbar_panel(snap: Snapshot) -> list[PublicDataset]:
    out = []
    judges = [(llm, s) for llm in PANEL_LLMS for s in PANEL_STRATEGIES]
    for folder, (short, benchmark, origin) in LLMBAR_PANEL.items():
        items = list(_llmbar_items(snap, f"Processed/{folder}", judges))
        where = snap.where(f"Dataset/Processed/{folder}/{{dataset.json, evaluators/<LLM>/<strategy>/result.json}}")
        out.append(PublicDataset(f"llmbar_panel_{short}", items, {
            "collection": "llmbar-panel",
            "benchmark": benchmark,
            "domain": "pairwise chat-response preference, gold label from human annotators",
            "kind": "pairwise-preference",
            "source": where,
            "licence": f"{LLMBAR_LICENCE}, which redistributes the items; the human labels come from {origin}, "
            f"whose own terms apply; {AGGREGATES_ONLY}",
            "judges": [f"{llm}/{s}/swap=False" for llm, s in judges],
            "note": "four different LLMs, two prompting strategies each (swap = False); a verdict is correct when its "
            "winner equals the human label; an unparsable verdict counts as incorrect",
        }, where))
    return out


def llmbar_chatgpt_check(snap: Snapshot) -> list[int]:
    """The histogram of llmbar_chatgpt_natural rebuilt with this reader (the shipped prior's 11 strategies)."""
    strategies = sorted(_strategies(snap, "LLMBar/Natural", "ChatGPT") - {"Vanilla_NoRules"})
    counts = Counter(sum(it["judgments"]) for it in _llmbar_items(snap, "LLMBar/Natural", [("ChatGPT", s) for s in strategies]))
    return [counts.get(s, 0) for s in range(len(strategies) + 1)]


# --- Judging the Judges (Thakur et al. 2024): TriviaQA answers graded by 9 LLM judges --------------------

TRIVIAQA_JUDGES = ["JudgeLM", "Gemma-2B", "Llama3-70B", "Llama-70B", "GPT-4", "Llama-7B", "Llama3-8B", "Llama-13B", "Mistral-7B"]
TRIVIAQA_FILE = "results/TriviaQA_Judges_w_HumanJudgement_V2.csv"


def triviaqa_judges(snap: Snapshot) -> list[PublicDataset]:
    rows = [r for r in snap.csv(TRIVIAQA_FILE) if r["Human-Eval"] in ("True", "False")]
    groups: dict[str, list[dict[str, Any]]] = {"base": [], "chat": []}
    for i, r in enumerate(rows):
        base = r["model"].endswith("-base") or r["model"] == "mistral-7B"
        judgments = [int(r[j] in ("True", "False") and r[j] == r["Human-Eval"]) for j in TRIVIAQA_JUDGES]
        groups["base" if base else "chat"].append({"id": f"{r['model']}-{i}", "text": r["question"], "judgments": judgments})
    where = snap.where(TRIVIAQA_FILE)
    out = []
    for group, items in groups.items():
        takers = sorted({it["id"].rsplit("-", 1)[0] for it in items})
        out.append(PublicDataset(f"judgingjudges_triviaqa_{group}", items, {
            "collection": "judging-the-judges",
            "benchmark": "triviaqa",
            "domain": f"open-domain QA grading: TriviaQA answers of {group} exam-taker models ({', '.join(takers)})",
            "kind": "qa-grading",
            "source": where,
            "licence": "no LICENSE file; the repository's package metadata (pyproject.toml) declares the MIT License; "
            f"questions from TriviaQA under that dataset's terms; {AGGREGATES_ONLY}",
            "judges": list(TRIVIAQA_JUDGES),
            "note": "9 LLM judges say whether an exam-taker's answer is correct given the reference answers; gold label: "
            "the human judgement (Human-Eval, the file's final version V2); a judge is correct when it agrees with it, "
            "a missing verdict counts as incorrect; rows without a human label dropped; text = the question only "
            "(the file holds no answer text)",
        }, where))
    return out


# --- Evaluating Open-Domain QA in the Era of LLMs (Kamalloo et al. 2023): NQ-open answers ----------------

def _normalise(text: str) -> str:
    """SQuAD answer normalisation: lower case, no punctuation, no articles, single spaces."""
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())


def openqa_nq(snap: Snapshot) -> list[PublicDataset]:
    human = snap.csv("data/NQ301_human.tsv", "\t")
    gpt4 = snap.csv("data/NQ301_gpt-4.tsv", "\t")
    bem = snap.csv("data/NQ301_BEM.tsv", "\t")
    # the InstructGPT file lost the tab between question and answer: its columns are shifted by one
    davinci = snap.csv("data/NQ301_text-davinci-003.tsv", "\t")
    if not len(human) == len(gpt4) == len(bem) == len(davinci):
        raise ValueError("NQ301 files differ in length")
    items = []
    for i, (h, g, b, d) in enumerate(zip(human, gpt4, bem, davinci)):
        q, a = h["Question"], h["Model answer"]
        if not (g["Question"] == b["Question"] == q and d["Question"] == q + a):
            raise ValueError(f"NQ301 row {i}: files do not line up")
        gold = h["Acceptable?"]  # the annotators' majority
        verdicts = [g["Acceptable?"], d["Model answer"], b["Acceptable?"]]  # each file's parsed Yes/No ("" = unparsable)
        golds = [_normalise(x) for x in b["Gold answers"].split(" | ")]
        em = "Yes" if _normalise(a) in golds else "No"
        judgments = [int(v == gold) for v in [*verdicts, em]]
        items.append({"id": f"nq301-{i}", "text": f"{q}\n{a}", "judgments": judgments})
    where = snap.where("data/NQ301_{human,gpt-4,BEM,text-davinci-003}.tsv")
    return [PublicDataset("openqa_eval_nq", items, {
        "collection": "openqa-eval",
        "benchmark": "nq-open",
        "domain": "open-domain QA grading: the distinct answers of the 12 released QA models (retriever-readers and "
        "InstructGPT) to 301 Natural Questions",
        "kind": "qa-grading",
        "source": where,
        "licence": f"MIT licence (ehsk/OpenQA-eval); questions from Natural Questions under that dataset's terms; {AGGREGATES_ONLY}",
        "judges": ["GPT-4 (GPT4-eval)", "text-davinci-003 (InstructGPT-eval)", "BEM (answer-equivalence model)",
                   "EM (normalised exact match against the gold answers, computed here)"],
        "note": "gold label: the majority of 2-3 human annotators (the human file's Acceptable? column); a judge is "
        "correct when its Yes/No agrees; an unparsable LLM verdict counts as incorrect; text = question and answer",
    }, where)]


# --- XSTest v2 (Röttger et al. 2024): refusal classification of model completions ------------------------

XSTEST_MODELS = ["gpt4", "llama2new", "llama2orig", "mistralguard", "mistralinstruct"]


def xstest(snap: Snapshot) -> list[PublicDataset]:
    groups: dict[str, list[dict[str, Any]]] = {"safe_prompts": [], "unsafe_prompts": []}
    for m in XSTEST_MODELS:
        gpt = snap.csv(f"evaluation/automated_evaluation_labels/xstest_v2_completions_{m}_gpteval.csv")
        sm = snap.csv(f"evaluation/automated_evaluation_labels/xstest_v2_completions_{m}_streval.csv")
        for g, s in zip(gpt, sm, strict=True):
            if g["id"] != s["id"] or g["final_label"] != s["final_label"]:
                raise ValueError(f"XSTest {m}: the two label files do not line up")
            gold = g["final_label"]
            judgments = [int(g["gpt4_label"] == gold), int(s["strmatch_label"] == gold)]
            group = "unsafe_prompts" if g["type"].startswith("contrast_") else "safe_prompts"
            item = {"id": f"{m}-{g['id']}", "text": f"{g['prompt']}\n\nResponse: {g['completion']}", "judgments": judgments}
            groups[group].append(item)
    where = snap.where("evaluation/automated_evaluation_labels/xstest_v2_completions_<model>_{gpteval,streval}.csv")
    return [PublicDataset(f"xstest_{group}", items, {
        "collection": "xstest",
        "benchmark": "xstest",
        "domain": "safety: is a model's reply to a " + ("safe prompt that looks unsafe" if group == "safe_prompts" else
                  "genuinely unsafe prompt") + " a full compliance, full refusal or partial refusal",
        "kind": "safety",
        "source": where,
        "licence": "CC-BY-4.0 (LICENSE of paul-rottger/exaggerated-safety; its readme puts the model completions "
        f"under the licences of Meta, Mistral and OpenAI); {AGGREGATES_ONLY}",
        "judges": ["GPT-4 classifier (gpteval)", "string-match classifier (streval)"],
        "note": "ONLY 2 judges; completions of 5 model set-ups (GPT-4; Llama-2 under its original and a new system "
        "prompt; Mistral-Instruct with and without a guardrail prompt); gold label: the final human label of 2 annotators (3 classes); a judge is "
        "correct when its class equals it; an unparsable GPT-4 label counts as incorrect; unsafe prompts are the "
        "contrast_* types (the readme's definition)",
    }, where) for group, items in groups.items()]


# --- Peer Rank and Discussion (Li et al. 2023): Vicuna-80 pairwise reviews by 4 LLMs ----------------------

PRD_MODELS = ["bard", "claude", "gpt35", "gpt4", "vicuna-13b"]
PRD_REVIEWERS = {"gpt4": "GPT-4", "claude": "Claude", "gpt35": "GPT-3.5", "bard": "Bard"}


def _preferred(score: Any, first: str, second: str) -> str:
    """A three-class review score: 1 = the first answer is better, 2 = the second, anything else a tie."""
    return {1: first, 2: second}.get(score if isinstance(score, int) else -1, "tie")


def prd_vicuna80(snap: Snapshot) -> list[PublicDataset]:
    votes: dict[tuple[int, str, str], list[str]] = defaultdict(list)
    for path in snap.files("data/vicuna80/ratings-human/"):
        m = re.search(r"answer_(.+)-vs-answer_(.+)-human-reviewer", path)
        if not m or not set(m.groups()) <= set(PRD_MODELS):
            continue
        a, b = m.groups()
        lo, hi = sorted((a, b))
        for x in snap.jsonl(path):
            votes[(int(x["question_id"]), lo, hi)].append({1: a, 2: b, 3: "tie"}[int(x["score"])])
    reviews: dict[tuple[str, str, str], dict[int, str]] = {}
    for r in PRD_REVIEWERS:
        for path in snap.files(f"data/vicuna80/ratings-{r}/"):
            m = re.search(rf"answer[_-](.+?)-vs-answer[_-](.+?)-{r}-reviewer", path)
            if not m:
                continue
            a, b = m.groups()
            reviews[(r, a, b)] = {int(x["question_id"]): _preferred(x.get("score"), a, b) for x in snap.jsonl(path)}
    questions = {int(q["question_id"]): q["text"] for q in snap.jsonl("data/vicuna80/prompts/vicuna_questions.jsonl")}
    answers = {m: {int(x["question_id"]): x["text"] for x in snap.jsonl(f"data/vicuna80/generations/answer_{m}.jsonl")}
               for m in PRD_MODELS}
    items = []
    for (q, a, b), vs in sorted(votes.items()):
        top = Counter(vs).most_common()
        if len(vs) < 2 or (len(top) > 1 and top[0][1] == top[1][1]) or top[0][0] == "tie":
            continue  # gold needs >= 2 annotators and a strict majority for one answer
        gold = top[0][0]
        judgments: list[int | None] = []
        for r in PRD_REVIEWERS:
            for first, second in ((a, b), (b, a)):
                v = reviews.get((r, first, second), {}).get(q)
                judgments.append(None if v is None else int(v == gold))
        items.append({"id": f"q{q}-{a}-{b}", "text": pair_text(questions[q], answers[a][q], answers[b][q]),
                      "judgments": judgments})
    where = snap.where("data/vicuna80/{ratings-human,ratings-<reviewer>}/*.jsonl, prompts/, generations/")
    return [PublicDataset("prd_vicuna80", items, {
        "collection": "prd-vicuna80",
        "benchmark": "vicuna80",
        "domain": "pairwise chat-response preference on the Vicuna-80 questions, gold label from 3 human annotators",
        "kind": "pairwise-preference",
        "source": where,
        "licence": f"MIT licence (bcdnlp/PRD); {AGGREGATES_ONLY}",
        "judges": [f"{name} reviewer, {o}" for name in PRD_REVIEWERS.values() for o in ("answers in alphabetical model order", "reversed order")],
        "note": "four LLM reviewers, each in both presentation orders (a missing review is no verdict); pairs of answers from Bard, GPT-3.5, GPT-4 and "
        "Vicuna-13B (pairs with Claude's answers have one annotation each and are left out); gold: the strict "
        "majority of the human annotations (human ties and split votes dropped); a tied review counts as incorrect",
    }, where)]


BUILDERS: dict[str, Callable[[Snapshot], list[PublicDataset]]] = {
    "princeton-nlp/LLMBar": lambda s: llmbar_evaluators(s) + llmbar_panel(s),
    "UMass-Meta-LLM-Eval/llm_eval": triviaqa_judges,
    "ehsk/OpenQA-eval": openqa_nq,
    "paul-rottger/exaggerated-safety": xstest,
    "bcdnlp/PRD": prd_vicuna80,
}


def write_jsonl(ds: PublicDataset, folder: Path) -> Path:
    path = folder / f"{ds.name}.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for it in ds.items:
            fh.write(json.dumps(it, ensure_ascii=False) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("snapshots", type=Path, nargs="?", default=ROOT.parent / "public-judge-data",
                    help="folder of git repositories named <owner>+<name> or <owner>/<name>")
    ap.add_argument("--out", type=Path, default=PRIORS, help="where the YAML files go (default configs/priors)")
    ap.add_argument("--jsonl-dir", type=Path, default=None,
                    help="keep the converted JSONL here (outside the repository); default: a temporary folder")
    ap.add_argument("--only", default="", help="only datasets whose name starts with this")
    args = ap.parse_args(argv)
    if not args.snapshots.is_dir():
        print(f"skipped: no snapshots at {args.snapshots}", file=sys.stderr)
        return 0
    from betaconform_cli import embeddings

    embedder = embeddings.embedder_for(embeddings.EmbedOptions())
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.jsonl_dir or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for repo, build in BUILDERS.items():
            snap = Snapshot.find(args.snapshots, repo)
            if snap is None:
                print(f"skipped {repo}: no snapshot with commit {COMMITS[repo]} under {args.snapshots}", file=sys.stderr)
                continue
            if repo == "princeton-nlp/LLMBar":
                check_llmbar(snap, args.out)
            for ds in build(snap):
                if not ds.name.startswith(args.only):
                    continue
                path = write_jsonl(ds, folder)
                out = write_prior(path, args.out, ds.source, ds.provenance, embedder)
                k = Counter(len(it["judgments"]) for it in ds.items)
                acc = sum(sum(j or 0 for j in it["judgments"]) for it in ds.items) / sum(
                    sum(j is not None for j in it["judgments"]) for it in ds.items)
                print(f"wrote {out.name}: {len(ds.items)} items, judges {dict(k)}, mean judge accuracy {acc:.3f}",
                      file=sys.stderr)
    return 0


def check_llmbar(snap: Snapshot, out: Path) -> None:
    """The LLMBar reader must rebuild the shipped ChatGPT prior's histogram from the same commit."""
    shipped = out / "llmbar_chatgpt_natural.yaml"
    if not shipped.exists():
        return
    import yaml

    want = yaml.safe_load(shipped.read_text())["histogram"]
    got = llmbar_chatgpt_check(snap)
    if want != {len(got) - 1: got}:
        raise SystemExit(f"LLMBar reader check failed: rebuilt {got}, shipped {want}")
    print("LLMBar reader check: rebuilds llmbar_chatgpt_natural's histogram exactly", file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
