"""``python -m mc``: the ``mc`` command, as ``python -m mc.cli``."""

import sys

from .cli import main

sys.exit(main())
