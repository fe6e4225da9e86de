"""Helper T's new inspect-ai runs (not committed): model-graded panel in one scorer, epoch reducers, a sample error,
an aborted (error) log. Offline: mockllm graders answer from a hash of the sample id in the prompt."""
import hashlib, re
from inspect_ai import Task, task, Epochs
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import Scorer, model_graded_qa, includes, at_least, pass_at, Score, scorer, accuracy, Target
from inspect_ai.solver import solver, Generate, TaskState

def u(*p):
    return int.from_bytes(hashlib.sha256("|".join(map(str, p)).encode()).digest()[:8], "big") / 2**64

HUMAN = {f"s{i:02d}": ("C" if i % 3 else "I") for i in range(1, 11)}

def _u(o):
    o.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return o

def grader(name, acc):
    calls = {}
    def out(input, tools, tool_choice, config):
        text = " ".join(str(m.content) for m in input)
        sid = re.search(r"\[(s\d\d)\]", text).group(1)
        calls[sid] = calls.get(sid, 0) + 1
        if name == "g3" and sid == "s04":
            return _u(ModelOutput.from_content(model="mockllm/model", content="I cannot decide."))
        h = HUMAN[sid]
        g = h if u(name, sid, calls[sid] if u("flip", name, sid, calls[sid]) < 0.3 else 1) < acc else ("I" if h == "C" else "C")
        return _u(ModelOutput.from_content(model="mockllm/model", content=f"Reasoning...\nGRADE: {g}"))
    return get_model("mockllm/model", custom_outputs=out, memoize=False)

@solver
def answer(fail=None):
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if state.sample_id == fail and state.epoch == 2:
            raise RuntimeError("solver crashed on purpose")
        state.output = ModelOutput.from_content(model="mockllm/model", content=f"the answer to {state.sample_id} is Paris")
        return state
    return solve

@scorer(metrics=[accuracy()])
def keyword():
    async def score(state, target: Target):
        return Score(value="C" if u("kw", state.sample_id, state.epoch) < 0.7 else "I", answer=state.output.completion)
    return score

def samples():
    return [Sample(id=s, input=f"[{s}] What is the capital of France?", target="Paris", metadata={"human": h}) for s, h in HUMAN.items()]

@task
def graded(fail: str = "s07", reducers: str = "mean,mode,max,at_least_2,pass_at_2"):
    red = []
    for r in reducers.split(","):
        red.append(at_least(2) if r == "at_least_2" else pass_at(2) if r == "pass_at_2" else r)
    return Task(dataset=samples(), solver=answer(fail),
                scorer=[model_graded_qa(model=[grader("g1", .85), grader("g2", .75), grader("g3", .7)]), keyword(), includes()],
                epochs=Epochs(3, red))

@scorer(metrics=[accuracy()])
def rescorer() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value="C" if u("re", state.sample_id, state.epoch) < 0.8 else "I")
    return score
