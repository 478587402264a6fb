"""The package's exception for bad input (one home: models, commands and checks all raise it)."""


class RoofplanError(ValueError):
    """Bad input: what was wrong and what is accepted (the CLI's message; its exit status 2)."""
