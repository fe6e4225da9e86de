"""Ragas multi-turn: AspectCritic judges on MultiTurnSample conversations (docs/FORMATS.md "Checked again", round 3).
Run in ragas 0.4.3's venv with `python stub.py PORT` running (a local OpenAI stub): python multiturn.py OUT PORT.
Eight conversations (item-1..item-8; items 2 and 5 without a `reference`, as most multi-turn samples are), three
AspectCritic metrics on three stub models (critic-c's reply on item-3 does not parse: NaN), a `human_label` column
added (item-6 unlabeled); written as CSV, JSON Lines, Parquet and a JSON list of records. A second set of files
(`noref.*`) holds conversations none of which has a reference."""

import sys
from pathlib import Path

from langchain_openai import ChatOpenAI
from ragas import EvaluationDataset, evaluate
from ragas.dataset_schema import MultiTurnSample
from ragas.llms import LangchainLLMWrapper
from ragas.messages import AIMessage, HumanMessage
from ragas.metrics import AspectCritic

port = sys.argv[2]


def llm(m):
    return LangchainLLMWrapper(ChatOpenAI(model=m, base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-stub", max_retries=0))


def conversation(i, reference=True):
    turns = [HumanMessage(content=f"item-{i}: what is 2+{i}?"), AIMessage(content=str(2 + i)),
             HumanMessage(content="and doubled?"), AIMessage(content=str(2 * (2 + i)))]
    return MultiTurnSample(user_input=turns, reference=f"{2 + i}, then {2 * (2 + i)}" if reference else None)


def run(samples, stem, out):
    metrics = [AspectCritic(name=f"correct_{x}", definition="Are the answers correct?", llm=llm(f"critic-{x}")) for x in "abc"]
    res = evaluate(EvaluationDataset(samples=samples), metrics=metrics, raise_exceptions=False, show_progress=False)
    df = res.to_pandas()
    df["human_label"] = [None if i == 6 else (0 if i % 4 == 0 else 1) for i in range(1, 9)]
    df.to_csv(out / f"{stem}.csv")
    df.to_json(out / f"{stem}.jsonl", orient="records", lines=True)
    df.to_parquet(out / f"{stem}.parquet")
    df.to_json(out / f"{stem}_records.json", orient="records")
    print(df)


out = Path(sys.argv[1])
out.mkdir(exist_ok=True)
run([conversation(i, reference=i not in (2, 5)) for i in range(1, 9)], "mt", out)
run([conversation(i, reference=False) for i in range(1, 9)], "noref", out)
