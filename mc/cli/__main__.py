"""``python -m mc.cli``: the ``mc`` command."""

import sys

from . import main

sys.exit(main())
