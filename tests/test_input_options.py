"""InputOptions in groups (issue 20 item 4): the groups, the flat keywords scripts used before them, the checks."""

from __future__ import annotations

import dataclasses
import math

import pytest

from betaconform_cli.errors import ParameterError
from betaconform_cli.inputs import InputOptions
from betaconform_cli.inputs.options import Handling, RecordFields, TableColumns


class TestFlatKeywords:
    """The constructor takes every group field by its own name, as before the groups."""

    def test_flat_and_grouped_are_the_same_options(self) -> None:
        flat = InputOptions("wide", label_field="vars.gold", cluster_field="prompt", judge_cols="gpt*", tolerance=0.5,
                            duplicates="last", labels="gold.csv")
        grouped = InputOptions("wide", RecordFields(label_field="vars.gold", cluster_field="prompt"),
                               TableColumns(judge_cols="gpt*"), Handling(tolerance=0.5, duplicates="last"), "gold.csv")
        assert flat == grouped
        assert (flat.record.label_field, flat.table.judge_cols, flat.handling.tolerance) == ("vars.gold", "gpt*", 0.5)

    def test_a_flat_keyword_changes_only_its_field_of_a_given_group(self) -> None:
        opts = InputOptions(record=RecordFields(id_field="uid"), text_field="prompt")
        assert (opts.record.id_field, opts.record.text_field, opts.record.label_field) == ("uid", "prompt", "label")

    def test_every_cli_input_option_is_a_keyword(self) -> None:
        """The CLI builds InputOptions from its options' flat values: each is a keyword, and to_dict gives them back."""
        from betaconform_cli.cli.options import INPUT_OPTIONS

        defaults = InputOptions().to_dict()
        assert set(INPUT_OPTIONS) | {"cluster_field", "by"} == set(defaults)  # cluster_field: score's ScoreGroup; by: SliceGroup
        assert InputOptions(**defaults) == InputOptions()

    def test_unknown_keyword(self) -> None:
        with pytest.raises(TypeError, match="unexpected keyword argument 'label_feild'"):
            InputOptions(label_feild="x")

    def test_replace_keeps_the_groups(self) -> None:
        opts = dataclasses.replace(InputOptions(tolerance=0.2, id_field="uid"), labels="gold.csv")
        assert (opts.handling.tolerance, opts.record.id_field, opts.labels) == (0.2, "uid", "gold.csv")


class TestChecks:
    """Each group checks its own fields; the error names the parameter as the library spells it."""

    @pytest.mark.parametrize(("keywords", "param"), [
        ({"source_format": "xml"}, "source_format"),
        ({"tolerance": math.nan}, "tolerance"),
        ({"tolerance": -0.1}, "tolerance"),
        ({"duplicates": "both"}, "duplicates"),
        ({"id_field": " "}, "id_field"),
        ({"cluster_field": ""}, "cluster_field"),
        ({"gold_col": ""}, "gold_col"),
        ({"judge_cols": ""}, "judge_cols"),
        ({"labels": ""}, "labels"),
    ])
    def test_named(self, keywords: dict[str, object], param: str) -> None:
        with pytest.raises(ParameterError) as info:
            InputOptions(**keywords)  # type: ignore[arg-type]
        assert info.value.params == (param,)

    def test_a_group_checks_itself(self) -> None:
        with pytest.raises(ParameterError):
            Handling(tolerance=math.inf)
        with pytest.raises(ParameterError):
            TableColumns(item_col="")
