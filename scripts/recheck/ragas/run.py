import sys
from pathlib import Path
from langchain_openai import ChatOpenAI
from ragas import EvaluationDataset, evaluate
from ragas.dataset_schema import SingleTurnSample
from ragas.llms import LangchainLLMWrapper
from ragas.metrics import AspectCritic
port = sys.argv[2]
def llm(m): return LangchainLLMWrapper(ChatOpenAI(model=m, base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-stub", max_retries=0))
samples = [SingleTurnSample(user_input=f"item-{i}: what is 2+{i}?", response=str(2 + i), reference=str(2 + i)) for i in range(1, 9)]
metrics = [AspectCritic(name=f"correct_{x}", definition="Is the response correct?", llm=llm(f"critic-{x}")) for x in "abc"]
res = evaluate(EvaluationDataset(samples=samples), metrics=metrics, raise_exceptions=False, show_progress=False)
df = res.to_pandas()
df["human_label"] = [None if i == 6 else (0 if i % 4 == 0 else 1) for i in range(1, 9)]
out = Path(sys.argv[1]); out.mkdir(exist_ok=True)
df.to_csv(out / "r.csv"); df.to_json(out / "r.jsonl", orient="records", lines=True); df.to_parquet(out / "r.parquet")
df.to_json(out / "r_records.json", orient="records")
print(df)
