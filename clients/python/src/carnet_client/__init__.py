"""Typed Python client for Carnet, the long-term memory service for LLM assistants.

    from carnet_client import CarnetClient

    with CarnetClient("https://carnet.internal", api_key) as carnet:
        carnet.remember("ADH-0042", "Le membre habite à Lyon 7e.", occurred_at=when)
        context = carnet.assemble("ADH-0042", "Où habite le membre ?")

``AsyncCarnetClient`` has the same methods, awaited. Errors are ``CarnetError`` subclasses
(``carnet_client.errors``).
"""

from carnet_client._options import __version__
from carnet_client._retry import Retry
from carnet_client.async_client import AsyncCarnetClient
from carnet_client.client import CarnetClient
from carnet_client.errors import (
    ApiError,
    AuditUnavailable,
    BadRequest,
    CarnetError,
    Conflict,
    Forbidden,
    InvalidBudget,
    InvalidInput,
    InvalidRequest,
    KeyUnwrapFailed,
    KmsRejected,
    KmsUnavailable,
    LegalHold,
    MemoryNotFound,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    ServerError,
    ServiceUnavailable,
    StoreLocked,
    SubjectNotFound,
    Timeout,
    TransportError,
    Unauthenticated,
    UnexpectedResponse,
)
from carnet_client.inputs import Budgets, Kind, NewMemory, Role, Status
from carnet_client.models import (
    ApiKey,
    AuditEntry,
    AuditProblem,
    AuditVerdict,
    Context,
    ErasureReceipt,
    Export,
    ExportRecord,
    HistoryEntry,
    MaintenanceReport,
    Memory,
    NewApiKey,
    Outcome,
    Page,
    Ranked,
    Readiness,
    RememberResult,
    Retention,
    Source,
)

__all__ = [
    "ApiError", "ApiKey", "AsyncCarnetClient", "AuditEntry", "AuditProblem", "AuditUnavailable", "AuditVerdict",
    "BadRequest", "Budgets", "CarnetClient", "CarnetError", "Conflict", "Context", "ErasureReceipt", "Export",
    "ExportRecord", "Forbidden", "HistoryEntry", "InvalidBudget", "InvalidInput", "InvalidRequest",
    "KeyUnwrapFailed", "Kind", "KmsRejected", "KmsUnavailable", "LegalHold", "MaintenanceReport", "Memory",
    "MemoryNotFound", "MethodNotAllowed", "NewApiKey", "NewMemory", "NotFound", "Outcome", "Page",
    "PayloadTooLarge", "Ranked", "RateLimited", "Readiness", "RememberResult", "Retention", "Retry", "Role",
    "ServerError", "ServiceUnavailable", "Source", "Status", "StoreLocked", "SubjectNotFound", "Timeout",
    "TransportError", "Unauthenticated", "UnexpectedResponse", "__version__",
]
