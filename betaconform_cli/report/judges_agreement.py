"""`judges`' agreement with the gold (issue 27): per judge (labels only, and model-based where the unlabeled items
are used), the confusion tables of more than two classes, the panel among themselves, kappa per judge as a chart,
and the CSV rows of `judges -f csv --csv-table agreement` (views reading the typed document, judges/document.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..formats import output_columns
from ..judges.document import AgreementEstimate, AgreementFigures, AgreementRecord, JudgesDocument
from .views import Chart, Series, TableView, pct


def _level(a: AgreementRecord) -> str:
    return f"{100 * float(a.confidence_level):.4g}"  # 90, 97.5 (--by's Bonferroni level), never rounded to 98


def _rate(x: AgreementEstimate | None) -> str:
    return "—" if x is None else f"{pct(x.estimate)} [{pct(x.low)}, {pct(x.high)}]"


def _coef(x: AgreementEstimate | None) -> str:
    return "—" if x is None else f"{x.estimate:.2f} [{x.low:.2f}, {x.high:.2f}]"


def _rates(a: AgreementRecord, f: AgreementFigures) -> tuple[str, ...]:
    """Sensitivity and specificity with a pass class; else each class's recall (two classes), nothing beyond."""
    if a.positive is not None:
        b = f.binary
        return (_rate(None if b is None else b.sensitivity), _rate(None if b is None else b.specificity))
    return tuple(_rate(r) for r in f.recall) if len(a.classes) == 2 else ()


def _rate_columns(a: AgreementRecord) -> tuple[str, ...]:
    if a.positive is not None:
        return ("sensitivity", "specificity")
    return tuple(f"recall {c}" for c in a.classes) if len(a.classes) == 2 else ()


def _rows(a: AgreementRecord, cells: Any) -> tuple[tuple[str, ...], ...]:
    """One row per judge and basis (labels only; then model-based where used): `cells(figures)` the figures' cells."""
    rows = []
    for i, j in enumerate(a.judges, 1):
        rows.append((str(i), j.name, str(j.labels.items), *cells(j.labels)))
        if j.model is not None:
            rows.append(("", "  model-based", str(j.model.items), *cells(j.model)))
    return tuple(rows)


def agreement_view(d: JudgesDocument) -> TableView | None:
    """How each judge errs against the gold: accuracy, sensitivity and specificity (or each class's recall)."""
    a = d.agreement
    if a is None:
        return None
    rates = _rate_columns(a)
    return TableView(
        title=f"agreement with the gold per judge: how it errs ({_level(a)}% intervals)",
        columns=("#", "judge", "items", "accuracy", *rates),
        rows=_rows(a, lambda f: (_rate(f.accuracy), *_rates(a, f))), caption=_caption(a),
        align="rl" + "r" * (2 + len(rates)))


def chance_view(d: JudgesDocument) -> TableView | None:
    """Each judge's chance-corrected agreement with the gold: Cohen's kappa, Gwet's AC1, Krippendorff's alpha."""
    a = d.agreement
    if a is None:
        return None
    return TableView(
        title=f"agreement with the gold per judge: chance-corrected ({_level(a)}% intervals)",
        columns=("#", "judge", "items", "Cohen's kappa", "Gwet's AC1", "Krippendorff's alpha"),
        rows=_rows(a, lambda f: (_coef(f.kappa), _coef(f.ac1), _coef(f.alpha))),
        caption="delta-method intervals on the Fisher z scale (variance at the table plus half an item per cell); 1 perfect, 0 "
                "chance; — where undefined (every item of one class)", align="rlrrrr")


def _caption(a: AgreementRecord) -> str:
    parts = []
    if a.positive is not None:
        others = [c for c in a.classes if c != a.positive]
        parts.append(f"pass = {a.positive}: sensitivity = P(judge says {a.positive} | gold {a.positive}), specificity = "
                     f"P(judge says {others[0]} | gold {others[0]}); false-fail rate = 1 - sensitivity, false-pass rate "
                     "= 1 - specificity (JSON: binary)")
    elif len(a.classes) == 2:
        parts.append("recall c = P(judge says c | gold c); no pass class (name one with --positive for sensitivity and "
                     "specificity)")
    else:
        parts.append(f"{len(a.classes)} classes: each judge's confusion table below (recall per class in the JSON)")
    if a.model_used:
        parts.append("model-based: " + a.model_note.removeprefix("model-based: "))
    else:
        parts.append(a.model_note)
    return "\n".join(parts)


def confusion_view(d: JudgesDocument) -> TableView | None:
    """Each judge's confusion table (rows gold, columns its verdict) where there are more than two classes."""
    a = d.agreement
    if a is None or len(a.classes) <= 2:
        return None
    rows = tuple((j.name if g == 0 else "", f"gold {c}", *(str(n) for n in j.confusion[g]))
                 for j in a.judges for g, c in enumerate(a.classes))
    return TableView(title="confusion tables: labeled items by gold class (rows) and the judge's verdict (columns)",
                     columns=("judge", "gold", *(f"said {c}" for c in a.classes)), rows=rows, align="ll" + "r" * len(a.classes))


def panel_view(d: JudgesDocument) -> TableView | None:
    """The panel's agreement among themselves, and the pairs that err together beyond their accuracies."""
    a = d.agreement
    if a is None:
        return None
    p = a.panel
    dependent = ", ".join(f"{x} & {y}" for x, y in p.dependent_pairs) or "none"
    rows = (
        ("Fleiss' kappa", _coef(p.fleiss_kappa), f"{p.complete_items} items judged by every judge"),
        ("Krippendorff's alpha", _coef(p.alpha), f"{p.items} items with two verdicts or more"),
    )
    caption = (f"pairs that err together more than their accuracies explain (the shared-mistakes table's Fisher tests, "
               f"Holm at {100 - 100 * float(a.confidence_level):.4g}%): {dependent}")
    return TableView(title=f"agreement among the judges ({_level(a)}% intervals; every item read, no gold needed)",
                     columns=("", "value", "on"), rows=rows, caption=caption, align="lrl")


def kappa_chart(d: JudgesDocument) -> Chart | None:
    """Cohen's kappa against the gold per judge, with its interval (HTML)."""
    a = d.agreement
    if a is None:
        return None
    ks = [j.labels.kappa for j in a.judges]
    return Chart(
        kind="hbars",
        title=f"Cohen's kappa with the gold per judge ({_level(a)}% intervals, labeled items)",
        rows=tuple(j.name for j in a.judges),
        series=(Series("kappa", tuple(None if k is None else k.estimate for k in ks),
                       tuple(None if k is None else k.low for k in ks), tuple(None if k is None else k.high for k in ks)),),
        x_label="Cohen's kappa (0: chance agreement, 1: perfect)", percent=False,
        caption="kappa corrects the judge's agreement with the gold for the agreement its class shares alone would give",
    )


AGREEMENT_CSV = output_columns("judges --csv-table agreement")  # registered in formats.py, so that a folder skips it


def _triple(x: AgreementEstimate | None) -> tuple[Any, Any, Any]:
    return (None, None, None) if x is None else (x.estimate, x.low, x.high)


def agreement_rows(d: JudgesDocument) -> Iterator[list[Any]]:
    """One row per judge and basis (labels, model), then the panel's (judge "(panel)": Fleiss' kappa in the kappa
    columns, its alpha in alpha's)."""
    a = d.agreement
    if a is None:
        return
    for j in a.judges:
        for basis, f in (("labels", j.labels), ("model", j.model)):
            if f is None:
                continue
            b = f.binary
            rates = (b.sensitivity, b.specificity, b.false_pass_rate, b.false_fail_rate) if b else (None,) * 4
            yield [d.dataset, j.name, basis, f.items, a.positive, *_triple(f.accuracy),
                   *(v for r in rates for v in _triple(r)), *_triple(f.kappa), *_triple(f.ac1), *_triple(f.alpha)]
    p = a.panel
    yield [d.dataset, "(panel)", "panel", p.items, a.positive, *(None,) * 15, *_triple(p.fleiss_kappa),
           None, None, None, *_triple(p.alpha)]
