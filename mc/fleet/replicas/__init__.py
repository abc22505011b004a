"""Replicas of several cards (SPEC §11): tensor-parallel groups paced by their slowest card.

``layout`` (which cards form which replica, the pool of replica classes), ``pace`` (a
replica's quality and dips: the minimum over its members, exact at dip boundaries) and
``outputs`` (the extra columns, wrong evictions of replicas). ``mc.fleet.month`` calls them
only when the pool has a class of ``tp > 1`` or the rule ranks members, so every other
month is §1's bit for bit.
"""

from . import layout as layout
from . import outputs as outputs
from . import pace as pace
from .layout import Layout as Layout
from .outputs import COLUMNS as COLUMNS

__all__ = ["layout", "outputs", "pace", "Layout", "COLUMNS"]
