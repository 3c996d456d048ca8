"""The one error type the dev tool raises on purpose: its message is a single line for the user."""


class DevError(Exception):
    """A situation the user can fix; `str(err)` is one clear line, shown without a traceback."""
