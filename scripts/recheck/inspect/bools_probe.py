from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import Score, Scorer, Target, accuracy, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
HUMAN = {"b1": True, "b2": False, "b3": True, "b4": False}
SAYS = {"b1": True, "b2": True, "b3": True, "b4": False}
NUM = {"b1": 1, "b2": 1, "b3": 0, "b4": 0}
@solver
def answer() -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.output = ModelOutput.from_content(model="mockllm/model", content="x")
        return state
    return solve
@scorer(metrics=[accuracy()])
def boolean() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=SAYS[str(state.sample_id)])
    return score
@scorer(metrics=[accuracy()])
def integer() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=NUM[str(state.sample_id)])
    return score
@task
def bools() -> Task:
    return Task(dataset=[Sample(id=s, input=f"q {s}", target="", metadata={"human": h, "human01": int(h)}) for s, h in HUMAN.items()],
                solver=answer(), scorer=[boolean(), integer()])
