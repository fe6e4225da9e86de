import hashlib, json, re, os
from deepeval import evaluate
from deepeval.evaluate.configs import AsyncConfig, DisplayConfig, ErrorConfig
from deepeval.metrics import GEval, AnswerRelevancyMetric
from deepeval.models import DeepEvalBaseLLM
from deepeval.test_case import LLMTestCase, LLMTestCaseParams

def u(*p): return int(hashlib.sha256("|".join(map(str, p)).encode()).hexdigest()[:8], 16) / 2**32

class Stub(DeepEvalBaseLLM):
    def __init__(self, name): self.name = name
    def load_model(self): return self
    def generate(self, prompt, schema=None):
        m = re.search(r"case-(\d+)", prompt); case = m.group(1) if m else "?"
        if self.name == "stub-b" and case == "3":
            raise RuntimeError("stub-b: upstream 500")
        good = u(self.name, case) < 0.65
        text = prompt.lower()
        if schema is not None:
            fields = getattr(schema, "model_fields", {})
            data = {}
            for f in fields:
                if f == "score": data[f] = 9 if good else 2
                elif f == "reason": data[f] = f"{self.name} on case {case}"
                elif f == "steps": data[f] = ["check the answer"]
                elif f == "statements": data[f] = ["statement"]
                elif f == "verdicts": data[f] = [{"verdict": "yes" if good else "no", "reason": "r"}]
                else: data[f] = "x"
            return schema(**data)
        return json.dumps({"score": 9 if good else 2, "reason": "r", "steps": ["check"]})
    async def a_generate(self, prompt, schema=None): return self.generate(prompt, schema)
    def get_model_name(self): return self.name

cases = [LLMTestCase(input=f"case-{i}: what is 2+{i}?", actual_output=str(2 + i), name=f"case_{i}",
                     additional_metadata={"label": "pass" if i % 3 else "fail"} if i != 5 else None) for i in range(1, 9)]
metrics = [GEval(name="Correctness", criteria="Is the answer correct?", evaluation_params=[LLMTestCaseParams.INPUT, LLMTestCaseParams.ACTUAL_OUTPUT],
                 model=Stub(m), threshold=0.5, strict_mode=(m == "stub-c")) for m in ("stub-a", "stub-b", "stub-c")]
metrics.append(AnswerRelevancyMetric(model=Stub("stub-d"), threshold=0.7, include_reason=False))
evaluate(cases, metrics, async_config=AsyncConfig(run_async=False), display_config=DisplayConfig(show_indicator=False, print_results=False),
         error_config=ErrorConfig(ignore_errors=True))
