"""Assembly budget arithmetic (docs/lifecycle.md, Assemble pre_prompt steps 1 and 4).

The split follows the reference's ``allocateContextBudget`` (docs/peers.md, OpenViking §5.2): a reserve for
the model's answer, then the guide, then the overview, and the rest for messages.
"""

from __future__ import annotations

import math
from typing import Any

DEFAULT_TOKEN_BUDGET = 128_000
RESERVE_RATIO = 0.15
RESERVE_FLOOR = 20_000
RESERVE_FLOOR_MIN_BUDGET = 40_000


def resolve_budget(token_budget: Any) -> int:
    """The request's budget when it is a positive finite number (floored), else 128000."""
    if isinstance(token_budget, bool) or not isinstance(token_budget, int | float):
        return DEFAULT_TOKEN_BUDGET
    if not math.isfinite(token_budget):
        return DEFAULT_TOKEN_BUDGET
    floored = math.floor(token_budget)
    # A positive value below 1 floors to 0, which is no budget at all: use the default.
    return floored if floored > 0 else DEFAULT_TOKEN_BUDGET


def reserved_tokens(budget: float) -> float:
    """Tokens held back for the answer: min(budget, max(15% of it, 20000 when budget >= 40000))."""
    floor = RESERVE_FLOOR if budget >= RESERVE_FLOOR_MIN_BUDGET else 0
    return min(budget, max(RESERVE_RATIO * budget, floor))


def message_budget(budget: float, guide_tokens: int, overview_tokens: int) -> int:
    """Tokens left for messages after the reserve, the guide and the overview (never negative)."""
    rest = budget - reserved_tokens(budget) - guide_tokens - overview_tokens
    # Token costs are integers, so flooring never changes which messages fit.
    return max(0, math.floor(rest))
