"""Job functions for the RQ scenario: a worker imports them by name, as a real application's
worker imports its tasks module."""


def double(x):
    return 2 * x


def fail(message):
    raise ValueError(message)
