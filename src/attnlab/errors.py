"""The one exception type for mistakes a user can fix: the CLI prints it as one line, exit 2.

It subclasses ``ValueError`` so library callers that catch bad input keep working. Anything else
that escapes a command is a bug in attnlab and keeps its traceback.
"""


class UserError(ValueError):
    """Bad input or a refused request, described in one line that names the value."""
