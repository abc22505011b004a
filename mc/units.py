"""Units every model shares: a month is 730 hours."""

HOURS = 730
SECONDS = HOURS * 3600  # 2,628,000 s in a month
CENTS = 100  # money is int32 cents on the device

__all__ = ["HOURS", "SECONDS", "CENTS"]
