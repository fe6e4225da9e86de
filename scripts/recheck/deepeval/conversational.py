from deepeval import evaluate
from deepeval.evaluate.configs import AsyncConfig, DisplayConfig, ErrorConfig
from deepeval.metrics import ConversationalGEval
from deepeval.test_case import ConversationalTestCase, Turn, TurnParams
from stubmod import Stub
cases = [ConversationalTestCase(name=f"conv_{i}", turns=[Turn(role="user", content=f"case-{i}: hi, what is 2+{i}?"), Turn(role="assistant", content=str(2 + i))],
                                additional_metadata={"label": "pass" if i % 3 else "fail"}) for i in range(1, 6)]
metrics = [ConversationalGEval(name="Helpful", criteria="Is the assistant helpful?", model=Stub(m), threshold=0.5, evaluation_params=[TurnParams.CONTENT]) for m in ("stub-a", "stub-b")]
evaluate(cases, metrics, async_config=AsyncConfig(run_async=False), display_config=DisplayConfig(show_indicator=False, print_results=False),
         error_config=ErrorConfig(ignore_errors=True))
