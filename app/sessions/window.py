"""The pending-token window (docs/lifecycle.md, Capture step 4; docs/peers.md, OpenViking §2.4).

``pendingTokens`` is the sum of the tokens of the live messages that lie outside the recent-keep
window, the ones the next commit would archive. It is kept up to date in O(1) per appended
message: with ``keep <= 0`` every appended message counts; otherwise each append that makes the
live count exceed ``keep`` pushes one message out of the window, ``live[-(keep + 1)]``, and that
message's tokens count. The closed form (used to rebuild) is the sum over ``live[:len - keep]``.

The caller does not load the live messages: it asks :func:`pushed_out_positions` which live
indexes are pushed out by a batch, fetches the tokens of those that were already stored (by
sequence offset), and hands them to :func:`advance_pending_tokens`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def _clamp(value: int) -> int:
    # Negative counters and keep values load as 0 (docs/peers.md, OpenViking §2.3, from_dict).
    return max(0, int(value))


def pushed_out_positions(live_count_before: int, keep: int, n_appended: int) -> list[int]:
    """0-based live indexes whose tokens a batch of ``n_appended`` appends adds to the window."""
    before = _clamp(live_count_before)
    keep = _clamp(keep)
    positions: list[int] = []
    for count_after in range(before + 1, before + _clamp(n_appended) + 1):
        if keep == 0:
            positions.append(count_after - 1)  # the appended message itself
        elif count_after > keep:
            positions.append(count_after - keep - 1)  # live[-(keep + 1)] after this append
    return positions


def advance_pending_tokens(
    pending: int,
    keep: int,
    live_count_before: int,
    appended_tokens: Sequence[int],
    stored_tokens: Mapping[int, int],
) -> int:
    """Pending tokens after appending messages with ``appended_tokens`` to the live list.

    ``stored_tokens`` maps a live index below ``live_count_before`` to that stored message's
    tokens; it must hold every such index that :func:`pushed_out_positions` returns (KeyError
    otherwise). Tokens of the appended messages come from ``appended_tokens``.
    """
    before = _clamp(live_count_before)
    total = _clamp(pending)
    for position in pushed_out_positions(before, keep, len(appended_tokens)):
        if position >= before:
            tokens = appended_tokens[position - before]
        else:
            tokens = stored_tokens[position]
        total += _clamp(tokens)
    return total


def pending_tokens_closed_form(live_tokens: Sequence[int], keep: int) -> int:
    """Sum of the tokens of ``live[:len(live) - keep]`` (all of them when ``keep <= 0``)."""
    keep = _clamp(keep)
    outside = len(live_tokens) - keep
    if outside <= 0:
        return 0
    return sum(_clamp(tokens) for tokens in live_tokens[:outside])
