import hashlib, json, os, sys
from pathlib import Path
from lm_eval.api.model import LM
from lm_eval.api.registry import register_model
def u(*p): return int(hashlib.sha256("|".join(map(str, p)).encode()).hexdigest()[:8], 16) / 2**32
DOCS = [(f"What is 2 + {i}?", str(2 + i + (i % 4 == 0)), "no" if i % 4 == 0 else "yes") for i in range(1, 11)]
@register_model("stub_judge")
class Stub(LM):
    def __init__(self, **kw): super().__init__()
    @classmethod
    def create_from_arg_string(cls, arg_string, additional_config=None): return cls()
    def generate_until(self, requests, disable_tqdm=False):
        out = []
        for r in requests:
            q = r.arguments[0].split("\n", 1)[0]
            out.append(" YES" if u("gen", q) < 0.6 else "no")
        return out
    def loglikelihood(self, requests, disable_tqdm=False):
        out = []
        for r in requests:
            ctx, cont = r.arguments
            q = ctx.split("\n", 1)[0]
            says = "yes" if u("mc", q) < 0.6 else "no"
            out.append((-0.1 if cont.strip() == says else -2.0 - len(cont), False))
        return out
    def loglikelihood_rolling(self, requests, disable_tqdm=False): raise NotImplementedError
if __name__ == "__main__":
    out = Path(sys.argv[1]).resolve()
    extra = sys.argv[2:]  # e.g. --predict_only: the samples without metrics
    with open("docs.jsonl", "w") as fh:
        for q, a, l in DOCS: fh.write(json.dumps({"question": q, "answer": a, "label": l}) + "\n")
    from lm_eval.__main__ import cli_evaluate
    sys.argv = ["lm_eval", "run", "--model", "stub_judge", "--model_args", "pretrained=stub-judge", "--tasks", "judge_mc,judge_gen",
                "--include_path", os.getcwd(), "--log_samples", "--output_path", str(out), "--seed", "0", *extra]
    cli_evaluate()
