import os, sys, tempfile
os.environ["MLFLOW_ENABLE_ASYNC_TRACE_LOGGING"] = "false"
os.environ["OPENAI_API_KEY"] = "sk-stub"; os.environ["OPENAI_BASE_URL"] = f"http://127.0.0.1:{sys.argv[2]}/v1"
import mlflow
from mlflow.genai.scorers import Correctness, RelevanceToQuery
from pathlib import Path
mlflow.set_tracking_uri(f"sqlite:///{tempfile.mkdtemp()}/m.db")
exp = mlflow.set_experiment("builtin")
data = [{"inputs": {"question": f"item-{n}: what is 2+{n}?"}, "outputs": str(2 + n), "expectations": {"expected_response": str(2 + n)}} for n in range(1, 6)]
mlflow.genai.evaluate(data=data, scorers=[Correctness(model="openai:/judge-a"), Correctness(model="openai:/judge-b"), RelevanceToQuery(model="openai:/judge-a")])
f = mlflow.search_traces(locations=[exp.experiment_id], order_by=["timestamp_ms ASC"]).drop(columns=["trace"])
f.to_json(Path(sys.argv[1]) / "builtin.jsonl", orient="records", lines=True)
