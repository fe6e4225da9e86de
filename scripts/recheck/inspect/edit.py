import sys, glob
from inspect_ai.log import read_eval_log, write_eval_log, edit_score
from inspect_ai.log._edit import ProvenanceData
from inspect_ai.scorer import ScoreEdit
src, dst = sys.argv[1], sys.argv[2]
log = read_eval_log(src)
def ed(sid, epoch, scorer, value, author="alice"):
    # edit_score finds a sample by id and epoch
    edit_score(log, sid, scorer, ScoreEdit(value=value, provenance=ProvenanceData(author=author, reason="reviewed")), epoch=epoch)
ed("s03", 1, "model_graded_qa", "C")      # human says the panel was wrong here: gold s03#1 = C
ed("s05", 2, "keyword", "C")              # keyword's edit
ed("s05", 2, "keyword", "I", author="bob")  # a second edit of the same score: last wins (= I)
ed("s06", 1, "includes", "I")
write_eval_log(log, dst)
print("edited")
