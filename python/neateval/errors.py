"""Exceptions of the neateval Python client.

Every exception is a NeatevalError and carries ``message``: the server's
own message (the ``error`` field of its JSON body), or the message
``neateval run`` printed, or what went wrong in this package. The HTTP
ones also carry ``status`` (the HTTP status code).
"""

__all__ = [
    "NeatevalError", "FormatError", "BadRequest", "Unauthorized", "Forbidden",
    "NotFound", "PayloadTooLarge", "UnsupportedMediaType", "ServiceBusy",
    "ServerError", "StreamError", "UsageError", "RunFailed",
]


class NeatevalError(Exception):
    """NeatevalError is the base of every error this package raises."""

    status = None

    def __init__(self, message, status=None):
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status


class FormatError(NeatevalError, ValueError):
    """FormatError is a population or safetensors file that cannot be read
    (or a population that cannot be written); the message names the file
    and the key, byte offset, genome or node."""


class BadRequest(NeatevalError):
    """BadRequest (400): the server refused the population or an option."""

    status = 400


class Unauthorized(NeatevalError):
    """Unauthorized (401): the bearer token is missing or wrong."""

    status = 401


class Forbidden(NeatevalError):
    """Forbidden (403): a population path outside the folders the operator
    allowed, or the path form with no folder allowed."""

    status = 403


class NotFound(NeatevalError):
    """NotFound (404): no such endpoint, or no population at that path."""

    status = 404


class PayloadTooLarge(NeatevalError):
    """PayloadTooLarge (413): the request body is over the server's limit."""

    status = 413


class UnsupportedMediaType(NeatevalError):
    """UnsupportedMediaType (415): the request's Content-Type is not one the
    endpoint takes."""

    status = 415


class ServiceBusy(NeatevalError):
    """ServiceBusy (503): the server's queue is full. retry_after is the
    number of seconds the server asked to wait (None if it did not say)."""

    status = 503

    def __init__(self, message, status=503, retry_after=None):
        super().__init__(message, status)
        self.retry_after = retry_after


class ServerError(NeatevalError):
    """ServerError (500, or any other status the client does not know): the
    server failed."""

    status = 500


class StreamError(NeatevalError):
    """StreamError: an evaluation that had started failed on the server (its
    stream ended with an error line) or the stream was cut short."""


class UsageError(NeatevalError):
    """UsageError: ``neateval run`` exited 2 (bad usage or config)."""


class RunFailed(NeatevalError):
    """RunFailed: ``neateval run`` exited 1 (a broken population or data set
    file, an I/O error...) or was interrupted. exit_code says which."""

    def __init__(self, message, exit_code=1):
        super().__init__(message)
        self.exit_code = exit_code


# BY_STATUS maps HTTP status codes to their exception classes.
BY_STATUS = {
    400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound,
    413: PayloadTooLarge, 415: UnsupportedMediaType, 503: ServiceBusy,
}
