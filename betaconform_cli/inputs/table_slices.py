"""Slices of a table (`--by COLUMN` or `length:COLUMN[:N]`; inputs/slices.py): the slice key becomes part of the
dataset column, so DuckDB splits the histogram, the marks and the vote patterns by slice in the queries that read
them; slices.named turns the composite names back into (parent, key)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..errors import InputError, quote_all
from .slices import MISSING, SEP, SliceSpec, label_of, parse_by
from .table_sql import Roles, Table, lit, q

SLICE_COLUMN = "__slice"


def by_column(table: Table, by: str | None) -> tuple[str, ...]:
    """The column `by` names, (it is never a judge) or () without --by; InputError naming it when absent."""
    if by is None:
        return ()
    spec = parse_by(by)
    if spec.field not in table.names:
        raise InputError(table.where, f"--by '{spec.text}': no column {spec.field!r} (columns: {quote_all(table.names)})",
                         field=spec.field)
    return (spec.field,)


def slice_table(con: Any, table: Table, roles: Roles, by: str | None) -> tuple[Table, Roles]:
    """The table with a composite dataset column (its dataset value, SEP, the slice key) and the roles that use it
    (without --by: as they are)."""
    if by is None:
        return table, roles
    spec = parse_by(by)
    if roles.shape == "patterns":
        raise InputError(table.where, f"--by '{spec.text}': a vote-pattern table holds no items to slice", field=spec.field)
    key = _key_expr(con, table, roles, spec)
    parent = f"coalesce(CAST({q(roles.dataset)} AS VARCHAR), '')" if roles.dataset else "''"
    expr = f"{parent} || {lit(SEP)} || ({key}) AS {q(SLICE_COLUMN)}"
    sliced = Table(table.where, f"(SELECT *, {expr} FROM {table.sql})", table.columns + ((SLICE_COLUMN, "VARCHAR"),),
                   table.row, f"(SELECT *, {expr} FROM {table.numbered})", table.rejected)
    return sliced, replace(roles, dataset=SLICE_COLUMN)


def _key_expr(con: Any, table: Table, roles: Roles, spec: SliceSpec) -> str:
    """SQL of a row's slice key: the column's trimmed text, or its length bucket; MISSING for null or empty text."""
    text = f"nullif(trim(CAST({q(spec.field)} AS VARCHAR)), '')"
    if not spec.length:
        return f"coalesce({text}, {lit(MISSING)})"
    per_item = f"GROUP BY {q(roles.item)}" if roles.item else ""
    length = f"length({text})"
    probs = ", ".join(str(i / spec.buckets) for i in range(1, spec.buckets))
    row = con.execute(f"SELECT quantile_cont(l, [{probs}]) FROM (SELECT any_value({length}) AS l FROM {table.sql} "
                      f"{per_item}) WHERE l IS NOT NULL").fetchone() if per_item else con.execute(
                      f"SELECT quantile_cont({length}, [{probs}]) FROM {table.sql} WHERE {length} IS NOT NULL").fetchone()
    qs = row[0] if row is not None else None
    if not qs:
        return lit(MISSING)
    import math

    edges = [int(math.floor(x)) for x in qs]
    cases = " ".join(f"WHEN {length} <= {e} THEN {lit(label_of(i, edges))}" for i, e in enumerate(edges))
    return f"CASE WHEN {length} IS NULL THEN {lit(MISSING)} {cases} ELSE {lit(label_of(len(edges), edges))} END"
