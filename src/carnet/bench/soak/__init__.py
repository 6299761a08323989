"""``carnet bench soak``: the production topology under two tenants' assistants and scheduled faults
(run: the command; stack: the processes; faults: the schedule and windows; assistants and client:
the load; ledger: the invariants checked on every answer; final: those checked at the end; summary:
the JSON)."""
