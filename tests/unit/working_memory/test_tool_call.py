"""The update tool: schema (docs/peers.md, OpenViking §2.6), argument parsing, regex salvage (§3.10)."""

from __future__ import annotations

import json

import pytest

from app.working_memory.document import WM_SEVEN_SECTIONS
from app.working_memory.tool_call import (
    WM_UPDATE_TOOL,
    WM_UPDATE_TOOL_CHOICE,
    parse_update_arguments,
    raw_arguments_text,
    recover_ops_from_raw,
)

ALL_KEEP = {name: {"op": "KEEP"} for name in WM_SEVEN_SECTIONS}


# --- schema ---


def test_tool_envelope_and_name() -> None:
    assert WM_UPDATE_TOOL["type"] == "function"
    function = WM_UPDATE_TOOL["function"]
    assert function["name"] == "update_working_memory"
    assert function["description"] == (
        "Emit a per-section decision (KEEP / UPDATE / APPEND) for the 7-section Working Memory "
        "document."
    )
    assert WM_UPDATE_TOOL_CHOICE == {
        "type": "function",
        "function": {"name": "update_working_memory"},
    }


def test_parameters_shape() -> None:
    params = WM_UPDATE_TOOL["function"]["parameters"]
    assert params["type"] == "object"
    assert params["required"] == ["sections"]
    assert params["additionalProperties"] is False
    assert params["properties"]["checkpoint_summaries"] == {
        "type": "array",
        "items": {"type": "string"},
    }
    sections = params["properties"]["sections"]
    assert sections["type"] == "object"
    assert sections["required"] == WM_SEVEN_SECTIONS
    assert sections["additionalProperties"] is False
    assert list(sections["properties"]) == WM_SEVEN_SECTIONS


def test_op_schema_one_of_three_closed_shapes() -> None:
    op = WM_UPDATE_TOOL["function"]["parameters"]["properties"]["sections"]["properties"][
        "Open Issues"
    ]
    keep, update, append = op["oneOf"]
    for shape in (keep, update, append):
        assert shape["additionalProperties"] is False
        assert shape["properties"]["op"]["type"] == "string"
    assert keep["properties"]["op"]["enum"] == ["KEEP"] and keep["required"] == ["op"]
    assert update["properties"]["op"]["enum"] == ["UPDATE"]
    assert update["properties"]["content"]["type"] == "string"
    assert update["required"] == ["op", "content"]
    assert append["properties"]["op"]["enum"] == ["APPEND"]
    assert append["properties"]["items"]["type"] == "array"
    assert append["properties"]["items"]["items"] == {"type": "string"}
    assert append["required"] == ["op", "items"]


def test_schema_is_json_serialisable() -> None:
    assert json.loads(json.dumps(WM_UPDATE_TOOL)) == WM_UPDATE_TOOL


# --- argument parsing ---


def test_parse_dict_and_json_string() -> None:
    args = {"sections": ALL_KEEP}
    assert parse_update_arguments(args) == ALL_KEEP
    assert parse_update_arguments(json.dumps(args)) == ALL_KEEP


def test_parse_top_level_sections() -> None:
    args = {**ALL_KEEP, "checkpoint_summaries": []}
    assert parse_update_arguments(args) == ALL_KEEP


def test_parse_partial_top_level_is_none() -> None:
    assert parse_update_arguments({"Session Title": {"op": "KEEP"}}) is None


def test_parse_raw_wrapper() -> None:
    assert parse_update_arguments({"raw": json.dumps({"sections": ALL_KEEP})}) == ALL_KEEP


def test_parse_repairs_unbalanced_braces() -> None:
    truncated = json.dumps({"sections": ALL_KEEP})[:-2] + ",  "
    assert parse_update_arguments({"raw": truncated}) == ALL_KEEP
    assert parse_update_arguments(truncated) == ALL_KEEP


def test_parse_double_encoded_string() -> None:
    assert parse_update_arguments(json.dumps(json.dumps({"sections": ALL_KEEP}))) == ALL_KEEP


@pytest.mark.parametrize(
    "arguments",
    [None, "", "not json", "[1, 2]", {"raw": "garbage {"}, {"sections": "KEEP"}, 42, {"raw": 5}],
)
def test_parse_unparseable_is_none(arguments: object) -> None:
    assert parse_update_arguments(arguments) is None


def test_raw_arguments_text() -> None:
    assert raw_arguments_text('{"a": 1') == '{"a": 1'
    assert raw_arguments_text({"raw": "abc"}) == "abc"
    assert json.loads(raw_arguments_text({"sections": {}})) == {"sections": {}}


# --- regex salvage (§3.10) ---


def test_recover_keep() -> None:
    assert recover_ops_from_raw('{"sections": {"Session Title": { "op" : "KEEP" }') == {
        "Session Title": {"op": "KEEP"}
    }


def test_recover_update() -> None:
    raw = '{"sections": {"Current State": {"op": "UPDATE", "content": "Busy now"}, "Oops'
    assert recover_ops_from_raw(raw) == {"Current State": {"op": "UPDATE", "content": "Busy now"}}


def test_recover_update_ending_before_next_section() -> None:
    raw = '{"Current State": {"op": "UPDATE", "content": "abc", "Task & Goals": {"op": "KEEP"}}'
    assert recover_ops_from_raw(raw) == {
        "Current State": {"op": "UPDATE", "content": "abc"},
        "Task & Goals": {"op": "KEEP"},
    }


def test_recover_append_with_and_without_closing_bracket() -> None:
    raw = '{"Open Issues": {"op": "APPEND", "items": ["one", "two"]}}'
    assert recover_ops_from_raw(raw) == {"Open Issues": {"op": "APPEND", "items": ["one", "two"]}}
    truncated = '{"Open Issues": {"op": "APPEND", "items": ["one", "two", "thr'
    assert recover_ops_from_raw(truncated) == {
        "Open Issues": {"op": "APPEND", "items": ["one", "two"]}
    }


def test_recover_mixed_three_ops() -> None:
    raw = (
        '{"sections": {"Session Title": {"op": "KEEP"}, '
        '"Current State": {"op": "UPDATE", "content": "Doing X"}, '
        '"Errors & Corrections": {"op": "APPEND", "items": ["bad port"]}, '
        '"Open Issues": {"op": "UPD'
    )
    assert recover_ops_from_raw(raw) == {
        "Session Title": {"op": "KEEP"},
        "Current State": {"op": "UPDATE", "content": "Doing X"},
        "Errors & Corrections": {"op": "APPEND", "items": ["bad port"]},
    }


def test_recover_empty_and_none() -> None:
    assert recover_ops_from_raw("") == {}
    assert recover_ops_from_raw(None) == {}
    assert recover_ops_from_raw("nothing useful") == {}


def test_recover_partial_garbage_still_gets_title() -> None:
    raw = 'xx{{garbage "Session Title": {"op": "UPDATE", "content": "Fix login"} ##!!'
    assert recover_ops_from_raw(raw)["Session Title"] == {"op": "UPDATE", "content": "Fix login"}


def test_recover_truncated_update_content_still_gets_title() -> None:
    raw = (
        '{"sections": {"Session Title": {"op": "UPDATE", "content": "Auth refactor"}, '
        '"Current State": {"op": "UPDATE", "content": "halfway through the sent'
    )
    assert recover_ops_from_raw(raw) == {
        "Session Title": {"op": "UPDATE", "content": "Auth refactor"}
    }


def test_recover_escaped_content() -> None:
    raw = r'{"Current State": {"op": "UPDATE", "content": "line1\nline2 with \"quotes\""}}'
    assert recover_ops_from_raw(raw)["Current State"]["content"] == 'line1\nline2 with "quotes"'


def test_recover_bad_escape_falls_back_to_raw_capture() -> None:
    raw = r'{"Current State": {"op": "UPDATE", "content": "bad \q escape"}}'
    assert recover_ops_from_raw(raw)["Current State"]["content"] == r"bad \q escape"


def test_recover_first_hit_per_section_wins_keep_first() -> None:
    raw = (
        '{"Task & Goals": {"op": "UPDATE", "content": "later"}, '
        '"Task & Goals": {"op": "KEEP"}, "Task & Goals": {"op": "APPEND", "items": ["x"]}}'
    )
    assert recover_ops_from_raw(raw) == {"Task & Goals": {"op": "KEEP"}}


def test_recover_escaped_append_items() -> None:
    raw = r'{"Files & Context": {"op": "APPEND", "items": ["src/a.py \"main\"", "b\\c"]'
    assert recover_ops_from_raw(raw)["Files & Context"]["items"] == ['src/a.py "main"', "b\\c"]
