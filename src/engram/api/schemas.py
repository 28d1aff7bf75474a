"""Wire shapes that are not domain types: defined in ``engram.model.wire`` (the client reads them too)."""

from engram.model.wire import BatchItemResult, BatchRequest, BatchResponse, Health, WriteResponse

__all__ = ["BatchItemResult", "BatchRequest", "BatchResponse", "Health", "WriteResponse"]
