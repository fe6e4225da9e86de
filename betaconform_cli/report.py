"""One output layer: result documents, and their JSON / CSV / Markdown / table-view renderings.

Pure: no typer, no rich. The CLI turns `TableView`s into rich tables; everything else is a string.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson

from . import __version__
from .data import CountTable
from .settings import TIE_RULE

if TYPE_CHECKING:
    from .fit import FitResult

SCHEMA = "betaconform/1"
FORMATS = ("table", "json", "csv", "markdown")
EXTENSIONS = {".json": "json", ".jsonl": "json", ".csv": "csv", ".md": "markdown", ".markdown": "markdown", ".txt": "table"}


@dataclass(frozen=True)
class TableView:
    """A format-neutral table: a title, column headers and rows of already formatted cells."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    caption: str = ""
    align: str = ""  # one of l/r per column; default: first left, the rest right


def pct(x: float | None, digits: int = 1) -> str:
    return "—" if x is None else f"{100 * x:.{digits}f}%"


def fit_document(
    command: str, name: str, source: str, table: CountTable, result: FitResult, seed: int, skipped: int = 0
) -> dict[str, Any]:
    """The JSON object for one dataset (schema betaconform/1)."""
    return {
        "schema": SCHEMA,
        "command": command,
        "tool_version": __version__,
        "dataset": name,
        "source": source,
        "items": table.items,
        "judges": table.max_judges,
        "skipped_lines": skipped,
        "seed": seed,
        "histogram": table.histogram_by_judges(),
        **result.to_dict(),
    }


def saved_document(doc: dict[str, Any], embedding: dict[str, Any] | None = None) -> dict[str, Any]:
    """The YAML body of a saved fit (params.SCHEMA is added by params.dump_fit)."""
    keep = {k: v for k, v in doc.items() if k not in ("schema", "gate")}
    keep["embedding"] = embedding
    return keep


def document_from_saved(saved: dict[str, Any], path: str) -> dict[str, Any]:
    """A saved fit turned back into the JSON object that `fit` printed, for `report`."""
    doc = {k: v for k, v in saved.items() if k != "schema"}
    doc["schema"] = SCHEMA
    doc["command"] = "report"
    doc["fitted_by"] = saved.get("command", "fit")
    doc["saved_fit"] = path
    doc.setdefault("source", path)
    doc.setdefault("seed", None)
    doc.setdefault("tie_rule", TIE_RULE)
    if doc.get("embedding") is not None:
        emb = dict(doc["embedding"])
        emb.pop("mean", None)
        doc["embedding"] = emb
    return doc


# --- JSON / CSV / Markdown ------------------------------------------------------------------------------


def to_json(docs: list[dict[str, Any]]) -> str:
    """One object for one dataset; JSON Lines for several."""
    if len(docs) == 1:
        return orjson.dumps(docs[0], option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY).decode() + "\n"
    return "".join(orjson.dumps(d, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY).decode() + "\n" for d in docs)


CSV_COLUMNS = ("dataset", "k", "estimate", "low", "high", "binomial", "beta_binomial", "empirical", "mixture", "items", "judges", "method")


def to_csv(docs: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for d in docs:
        for r in d["error_rates"]:
            w.writerow(
                [d["dataset"], r["k"]]
                + ["" if r.get(c) is None else repr(round(float(r[c]), 6)) for c in CSV_COLUMNS[2:9]]
                + [d["items"], d["judges"], d["method"]]
            )
    return buf.getvalue()


def _md_table(view: TableView) -> str:
    lines = ["| " + " | ".join(view.columns) + " |", "|" + "|".join("---" for _ in view.columns) + "|"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in view.rows]
    return "\n".join(lines)


def to_markdown(docs: list[dict[str, Any]], gate_lines: list[str] | None = None) -> str:
    """Suits a CI job summary: a heading and a table per dataset, a summary table for several."""
    out = []
    if len(docs) > 1:
        out += ["## BetaConform summary", "", _md_table(summary_view(docs)), ""]
    for d in docs:
        out += [f"## {d['dataset']}", "", describe(d), "", _md_table(error_view(d)), "", f"_{d.get('tie_rule', TIE_RULE)}; " + interval_note(d) + "_", ""]
    if gate_lines:
        out += ["## Gate", ""] + [f"- {g}" for g in gate_lines] + [""]
    return "\n".join(out)


# --- views ----------------------------------------------------------------------------------------------


def describe(d: dict[str, Any]) -> str:
    m = d["model"]
    comps = ", ".join(f"{100 * c['weight']:.0f}% of items at mean accuracy {c['mean']:.2f}" for c in m["components"])
    n = len(m["components"])
    kind = "single Beta-Binomial" if n == 1 else f"{n}-component Beta-Binomial mixture"
    return f"{d['items']} labeled items, up to {d['judges']} judges; {kind}: {comps}"


def interval_note(d: dict[str, Any]) -> str:
    cl = d.get("interval", {}).get("confidence_level", d.get("settings", {}).get("confidence_level", 0.9))
    return f"{round(100 * cl)}% interval; empirical is — where an item has fewer than k judges"


def error_view(d: dict[str, Any]) -> TableView:
    cl = d.get("interval", {}).get("confidence_level", 0.9)
    rows = []
    for r in d["error_rates"]:
        k = r["k"]
        rows.append(
            (
                f"{k}{'*' if k % 2 == 0 else ''}{'†' if r.get('empirical', 0) is None else ''}",
                f"{pct(r['estimate'])} [{pct(r['low'])}, {pct(r['high'])}]",
                pct(r["binomial"]),
                pct(r["beta_binomial"]),
                pct(r["empirical"]),
            )
        )
    return TableView(
        title=f"{d['dataset']}: majority-vote error by number of judges k",
        columns=("k", f"estimate [{round(100 * cl)}% interval]", "binomial", "beta-binomial", "empirical"),
        rows=tuple(rows),
        caption="* even k: " + TIE_RULE.replace("for even k ", "")
        + (
            "\n† more judges than some items have: the mixture extrapolates; the interval omits the mixture's own uncertainty"
            if any(r.get("empirical", 0) is None for r in d["error_rates"])
            else ""
        ),
    )


def diagnostics_view(d: dict[str, Any]) -> TableView:
    m = d["model"]
    rows = [
        ("method", d["method"]),
        ("estimate", d.get("method_description", "")),
        ("items / most judges", f"{d['items']} / {d['judges']}"),
        ("log-likelihood", f"{m.get('log_likelihood', float('nan')):.3f}"),
        ("converged", str(m.get("converged"))),
        ("BIC", f"{m.get('bic', float('nan')):.2f}"),
    ]
    for i, c in enumerate(m["components"], 1):
        rows.append((f"component {i}", f"w={c['weight']:.3f}  alpha={c['alpha']:.3g}  beta={c['beta']:.3g}  mean={c['mean']:.3f}"))
    if d.get("skipped_lines"):
        rows.append(("skipped lines", str(d["skipped_lines"])))
    return TableView(title="fit diagnostics", columns=("diagnostic", "value"), rows=tuple(rows), align="ll")


def summary_view(docs: list[dict[str, Any]], ks: tuple[int, ...] = (1, 3, 5, 11)) -> TableView:
    shown = [k for k in ks if any(r["k"] == k for r in docs[0]["error_rates"])]
    rows = []
    for d in docs:
        by_k = {r["k"]: r for r in d["error_rates"]}
        cells = [pct(by_k[k]["estimate"]) if k in by_k else "—" for k in shown]
        rows.append((d["dataset"], str(d["items"]), str(d["judges"]), *cells))
    return TableView(
        title="summary: estimated majority-vote error",
        caption="intervals: in each dataset's table",
        columns=("dataset", "items", "judges", *[f"k={k}" for k in shown]),
        rows=tuple(rows),
    )


SIDE_BY_SIDE_MAX = 3  # four columns of "26.8% [22.4%, 31.5%]" no longer fit 80 columns


def side_by_side_view(docs: list[dict[str, Any]]) -> TableView:
    """Rows k, one column per dataset (estimate [interval]): for comparing a few fits directly."""
    ks = sorted({r["k"] for d in docs for r in d["error_rates"]})
    by = [{r["k"]: r for r in d["error_rates"]} for d in docs]
    rows = []
    for k in ks:
        cells = [f"{pct(b[k]['estimate'])} [{pct(b[k]['low'])}, {pct(b[k]['high'])}]" if k in b else "—" for b in by]
        rows.append((f"{k}{'*' if k % 2 == 0 else ''}", *cells))
    return TableView(
        title="side by side: estimated majority-vote error [interval] by k",
        columns=("k", *[d["dataset"] for d in docs]),
        rows=tuple(rows),
    )


def histogram_bars(d: dict[str, Any], width: int = 40) -> tuple[str, list[tuple[int, int, float]]]:
    """Observed vs fitted counts of S at the most common number of judges: (title, [(s, observed, fitted)])."""
    from .distributions import Mixture

    hist = {int(k): v for k, v in d["histogram"].items()}
    big_k = max(hist, key=lambda k: (sum(hist[k]), k))
    obs = hist[big_k]
    mix = Mixture.from_dict(d["model"])
    fitted = np.asarray(mix.pmf(big_k)) * sum(obs)
    title = f"correct judges out of {big_k}: observed (█) vs fitted mixture (┃), {sum(obs)} items"
    return title, [(s, int(obs[s]), float(fitted[s])) for s in range(big_k + 1)]


def bar_chart_lines(d: dict[str, Any], width: int = 40) -> list[str]:
    title, bars = histogram_bars(d)
    top = max(max(o, f) for _, o, f in bars) or 1
    lines = [title]
    for s, o, f in bars:
        n_obs = round(width * o / top)
        n_fit = round(width * f / top)
        bar = "".join("█" if i < n_obs else " " for i in range(max(n_obs, n_fit) + 1))
        bar = bar[:n_fit] + "┃" + bar[n_fit + 1 :]
        lines.append(f"{s:>3} {bar.rstrip():<{width + 1}} {o:>5} obs {f:>7.1f} fit")
    return lines
