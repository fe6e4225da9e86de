import json, os, sys, tempfile
from pathlib import Path
os.environ["MLFLOW_ENABLE_ASYNC_TRACE_LOGGING"] = "false"
import mlflow
from mlflow.entities import AssessmentError, AssessmentSource, AssessmentSourceType as T
out = Path(sys.argv[1]); out.mkdir(parents=True, exist_ok=True)
tmp = tempfile.mkdtemp()
mlflow.set_tracking_uri(f"sqlite:///{tmp}/mlflow.db")
# ---- A: logged assessments: two judges with one name, a judge re-run, an error feedback, expectations as gold
exp = mlflow.set_experiment("logged")
ids = {}
for n in range(1, 11):
    with mlflow.start_span(name="answer") as span:
        span.set_inputs({"question": f"item-{n}: what is 2+{n}?"}); span.set_outputs({"answer": str(2 + n)})
        ids[n] = span.trace_id
J = lambda s: AssessmentSource(source_type=T.LLM_JUDGE, source_id=s)
Hm = lambda s: AssessmentSource(source_type=T.HUMAN, source_id=s)
for n in range(1, 11):
    a = "yes" if n % 3 else "no"; b = "yes" if n % 4 else "no"
    mlflow.log_feedback(trace_id=ids[n], name="correctness", value=a, source=J("openai:/gpt-4o"), rationale="r")
    if n == 4:
        mlflow.log_feedback(trace_id=ids[n], name="correctness", source=J("anthropic:/claude"),
                            error=AssessmentError(error_code="RATE_LIMIT", error_message="429"))
    else:
        mlflow.log_feedback(trace_id=ids[n], name="correctness", value=b, source=J("anthropic:/claude"))
    if n == 3:  # the same judge again on the same trace (a re-run): a second valid assessment
        mlflow.log_feedback(trace_id=ids[n], name="correctness", value="no", source=J("openai:/gpt-4o"))
    if n <= 7:  # ground truth as an expectation (MLflow's word for it), same name as the judges' feedback
        mlflow.log_expectation(trace_id=ids[n], name="correctness", value="yes" if n % 2 else "no", source=Hm("alice"))
    if n == 8:  # an expectation with a default source
        mlflow.log_expectation(trace_id=ids[n], name="correctness", value="yes")
    if n == 9:  # a reference answer: an expectation of another name
        mlflow.log_expectation(trace_id=ids[n], name="expected_response", value=str(2 + n), source=Hm("alice"))
order = ["timestamp_ms ASC"]
f = mlflow.search_traces(locations=[exp.experiment_id], order_by=order).drop(columns=["trace"])
f.to_json(out / "logged.jsonl", orient="records", lines=True)
f.to_json(out / "logged_records.json", orient="records")
f.to_parquet(out / "logged.parquet")
tr = mlflow.search_traces(locations=[exp.experiment_id], order_by=order, return_type="list")
(out / "logged_dicts.json").write_text(json.dumps([t.to_dict() for t in tr]))
print("A done", mlflow.__version__)
# ---- B: mlflow.genai.evaluate with make_judge judges (a local OpenAI stub) and expectations as ground truth
from mlflow.genai.judges import make_judge
port = sys.argv[2]
judges = [make_judge(name="correct", instructions="Is the answer in {{ outputs }} correct for {{ inputs }}? Expected: {{ expectations }}",
                     model=f"openai:/judge-{x}", base_url=f"http://127.0.0.1:{port}/v1", feedback_value_type=str) for x in "abc"]
data = [{"inputs": {"question": f"item-{n}: what is 2+{n}?"}, "outputs": str(2 + n + (n % 4 == 0)),
         "expectations": {"correct": "no" if n % 4 == 0 else "yes"}} for n in range(1, 9)]
exp2 = mlflow.set_experiment("evaluated")
os.environ.setdefault("OPENAI_API_KEY", "sk-stub")
try:
    res = mlflow.genai.evaluate(data=data, scorers=judges)
    f = mlflow.search_traces(locations=[exp2.experiment_id], order_by=order).drop(columns=["trace"])
    f.to_json(out / "evaluated.jsonl", orient="records", lines=True)
    f.to_parquet(out / "evaluated.parquet")
    print("B done", res.run_id)
except Exception as e:
    import traceback; traceback.print_exc()
