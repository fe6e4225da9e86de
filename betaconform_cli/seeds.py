"""Seeds and the random generators made from them: light (numpy is imported when a generator is made), so the CLI
can check --seed before heavy imports."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .parameters import check

if TYPE_CHECKING:
    import numpy as np


def check_seed(seed: int) -> None:
    """A seed in the one range every command, output and saved fit carries (0 to 2^53 - 1)."""
    check("seed", seed)


def generators(seed: int, n: int) -> list[np.random.Generator]:
    """`n` independent random generators from one seed, one per use of randomness in a command. The first is
    numpy's default_rng(seed) itself -- what `fit` draws its posterior from, so that a command's fit equals `fit`'s
    with the same seed and every seed gives the numbers it always gave --; the others are the children of
    SeedSequence(seed).spawn(n - 1) (a decision, which items come next), so that no use replays another's numbers,
    as generators seeded alike would. The seed is checked first."""
    import numpy as np

    check_seed(seed)
    children = np.random.SeedSequence(seed).spawn(n - 1) if n > 1 else []
    return [np.random.default_rng(seed), *(np.random.default_rng(child) for child in children)]


def generator(seed: int) -> np.random.Generator:
    """The one generator of a command with one use of randomness: generators(seed, 1)[0], default_rng(seed)."""
    return generators(seed, 1)[0]
