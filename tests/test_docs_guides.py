"""The guides' console blocks run and print what they show, as the README's do
(tests/test_docs.py): a file of their own, so that a two-process run shares the
README's commands and the guides' between its processes."""

import pytest
from test_docs import GUIDE_COMMANDS, check_shown


@pytest.mark.slow
@pytest.mark.parametrize("doc, n, command, expected, reason", GUIDE_COMMANDS,
                         ids=[f"{c[0]}:{c[1]}" for c in GUIDE_COMMANDS])
def test_shown_command_runs(doc, n, command, expected, reason, tmp_path_factory):
    check_shown(doc, n, command, expected, reason, tmp_path_factory)
