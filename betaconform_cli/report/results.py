"""The accessors every result offers a script or a notebook (the library: docs/API.md)."""

from __future__ import annotations

from typing import Any


def _number(cell: str) -> Any:
    """A CSV cell as the value it writes: an int, a float, None (empty), else the text."""
    if cell == "":
        return None
    for kind in (int, float):
        try:
            return kind(cell)
        except ValueError:
            pass
    return cell


class Results:
    """What every command's result offers a script or a notebook besides the CLI's views (`blocks`, `json`, `csv`):
    `summary()` (the CLI's tables as text), `to_dict()` (the JSON document, or the list of them), `rows()` and
    `to_pandas()` (the CSV table as records or a pandas DataFrame; pandas is imported only here)."""

    def _me(self) -> Any:
        return self

    def summary(self) -> str:
        """The tables and lines the CLI prints (`--format table`), as plain text."""
        from .render import to_text

        return to_text(self._me().blocks())

    def to_dict(self) -> Any:
        """The JSON document (`--format json`) as Python values: a dict, or a list of dicts for several datasets."""
        import orjson

        text = self._me().json()
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:  # several documents are written one per line (JSON Lines)
            return [orjson.loads(line) for line in text.splitlines() if line.strip()]

    def rows(self) -> list[dict[str, Any]]:
        """The CSV table (`--format csv`), one dict per row, numbers as numbers."""
        import csv
        import io

        return [{k: _number(v) for k, v in row.items()} for row in csv.DictReader(io.StringIO(self._me().csv()))]

    def tables(self) -> dict[str, list[dict[str, Any]]]:
        """Every table of the JSON document by its key (a fit's `error_rates`, judges' `judges`, `pairs` and
        `ensembles`, ...: each list of objects), one row per entry, each led by its dataset's name."""
        docs = self.to_dict()
        out: dict[str, list[dict[str, Any]]] = {}
        for d in docs if isinstance(docs, list) else [docs]:
            for key, value in d.items():
                if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
                    out.setdefault(key, []).extend({"dataset": d.get("dataset"), **v} for v in value)
        return out

    def to_pandas(self, table: str | None = None) -> Any:
        """`rows()` (the CSV table) as a pandas DataFrame, or the table `table` of `tables()` (pandas is an optional
        dependency: pip install pandas)."""
        try:
            import pandas as pd
        except ImportError:
            from ..errors import UsageError

            raise UsageError("to_pandas() needs pandas (pip install pandas); rows() and tables() give the same as dicts") from None
        if table is None:
            return pd.DataFrame(self.rows())
        found = self.tables()
        if table not in found:
            from ..errors import ParameterError

            raise ParameterError("table", f"{table!r} is not a table of this result; its tables: {', '.join(found) or 'none'}")
        return pd.DataFrame(found[table])

    def _repr_markdown_(self) -> str:  # Jupyter shows a result as the job summary's Markdown
        from .render import to_markdown

        return to_markdown(self._me().blocks(markdown=True))
