"""Pure parts of the console and the commands: the Working Memory diff, guard marks, message
parts, the progress bar."""

from __future__ import annotations

import io

from app.api.console.diff import diff_counts, guard_marks, side_by_side
from app.api.console.messages import message_view
from app.commands.progress import ProgressBar
from app.working_memory.guards import WM_CONSOLIDATION_SENTINEL, WM_RESTORED_MARKER


def test_side_by_side_pairs_changed_lines_and_keeps_unpaired_ones() -> None:
    old = "# WM\n## Files\n- a.py\n- b.py\n## Open Issues\n- fix x"
    new = "# WM\n## Files\n- a.py\n- c.py\n- d.py\n## Open Issues"
    rows = side_by_side(old, new)
    assert [(r.kind, r.old_text, r.new_text) for r in rows] == [
        ("same", "# WM", "# WM"),
        ("same", "## Files", "## Files"),
        ("same", "- a.py", "- a.py"),
        ("changed", "- b.py", "- c.py"),
        ("added", None, "- d.py"),
        ("same", "## Open Issues", "## Open Issues"),
        ("removed", "- fix x", None),
    ]
    assert [(r.old_number, r.new_number) for r in rows][3:5] == [(4, 4), (None, 5)]
    assert diff_counts(rows) == {"changed": 1, "removed": 1, "added": 1}


def test_identical_versions_have_no_changes() -> None:
    rows = side_by_side("a\nb", "a\nb")
    assert diff_counts(rows) == {"changed": 0, "removed": 0, "added": 0} and len(rows) == 2


def test_guard_marks_are_the_lines_a_guard_wrote() -> None:
    overview = f"## Open Issues\n- {WM_RESTORED_MARKER} pin the tag\n- new issue\n## Key Facts\n{WM_CONSOLIDATION_SENTINEL}"
    assert guard_marks(overview) == [
        f"- {WM_RESTORED_MARKER} pin the tag",
        WM_CONSOLIDATION_SENTINEL,
    ]
    assert guard_marks("## Open Issues\n- nothing restored") == []


def test_message_parts_render_tool_calls_results_and_thinking() -> None:
    call = message_view(
        2,
        {
            "role": "assistant",
            "timestamp": 1_760_000_000_000,
            "content": [
                {"type": "thinking", "thinking": "look at logs"},
                {"type": "text", "text": "Reading."},
                {"type": "toolCall", "id": "t1", "name": "exec", "arguments": {"command": "ls"}},
                {"type": "image", "data": "..."},
                {"type": "custom", "x": 1},
            ],
        },
    )
    assert call.heading == "assistant" and call.time == "2025-10-09 08:53:20 UTC"
    assert [(p.kind, p.title) for p in call.parts] == [
        ("thinking", "Thinking"),
        ("text", ""),
        ("tool_call", "Tool call: exec (t1)"),
        ("image", "Image"),
        ("other", "Block: custom"),
    ]
    assert call.parts[2].text == '{\n  "command": "ls"\n}'
    result = message_view(
        3, {"role": "toolResult", "toolName": "exec", "isError": True, "content": "boom"}
    )
    assert (result.heading, result.is_error, result.parts[0].text, result.time) == (
        "Tool result: exec (error)",
        True,
        "boom",
        None,
    )


def test_progress_bar_without_a_terminal_writes_lines_and_a_final_note() -> None:
    stream = io.StringIO()
    bar = ProgressBar("import", 100, stream)
    bar.update(30)
    bar.update(35)  # within a second of the last line and the same tenth: not written
    bar.update(50)  # a new tenth: written at once
    bar.update(100)  # finished: left to close()
    bar.close("done: 100 imported")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("import: [#########---------------------] 30/100  30%")
    assert lines[1].startswith("import: [###############---------------] 50/100  50%")
    assert lines[2].startswith("import: [##############################] 100/100 100%")
    assert lines[2].endswith("done: 100 imported")
