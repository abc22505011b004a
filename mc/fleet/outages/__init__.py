"""Capacity that goes away (SPEC §10): hard failures and spot preemptions in §6's month.

One module per concept: ``fields`` (the ``[failures]`` and ``[spot]`` sections),
``plan`` (the static shape: zones, event caps), ``events`` (the draws: candidate
events and zone spells), ``timeline`` (a round's slot histories), ``failover`` (the
run set between rounds), ``ledger`` (capacity, the hour-weighted bill, §10's
outputs) and ``seam`` (what §6's rounds call). ``mc.fleet.autoscaler`` calls the
seam only when a term is on, so with every term off the month is §6's bit for bit.
"""

from . import events as events
from . import failover as failover
from . import ledger as ledger
from . import plan as plan
from . import seam as seam
from . import timeline as timeline
from .fields import MARKETS as MARKETS
from .fields import Failures as Failures
from .fields import Spot as Spot
from .ledger import COLUMNS as COLUMNS

__all__ = ["events", "failover", "ledger", "plan", "seam", "timeline", "MARKETS", "Failures", "Spot", "COLUMNS"]
