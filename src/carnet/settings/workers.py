"""Background work: intake workers (``CARNET_WORKERS__*``) and the maintenance scheduler (``CARNET_MAINTENANCE__*``)."""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator


class WorkerSettings(BaseModel):
    """Intake workers: in `carnet serve` (embedded: the shard has one owner) or `carnet worker` processes."""

    in_process: bool = True  # `carnet serve` runs workers itself (turn off when `carnet worker` runs them)
    threads: int = Field(2, ge=1, le=64)
    lease_seconds: float = Field(120.0, ge=5)
    poll_seconds: float = Field(0.5, gt=0, le=60)
    max_attempts: int = Field(5, ge=1, le=100)
    backoff_seconds: float = Field(2.0, gt=0)
    max_backoff_seconds: float = Field(300.0, gt=0)
    outage_retry_seconds: float = Field(10.0, gt=0)  # a dependency down: tried again this often, uncounted
    outage_max_hours: float = Field(24.0, gt=0)  # … for at most this long after the intake was received
    wait_max_seconds: float = Field(10.0, ge=0, le=60)  # the longest `GET /intakes/{id}?wait=true` holds
    # A session's messages stay sealed this long after its intake is done, read as the context of the
    # session's next intakes (a call posted exchange by exchange); 0: dropped at once, no context.
    session_context_minutes: float = Field(60.0, ge=0, le=24 * 60)


class MaintenanceSettings(BaseModel):
    """The in-process scheduler of ``carnet serve`` on the embedded store (retention, decay,
    compaction; backups when an interval is set). With a Qdrant server, CronJobs or systemd timers
    run ``carnet maintain`` instead."""

    scheduler: bool = True
    interval_hours: float = Field(24.0, gt=0, le=24 * 31)
    startup_delay_seconds: float = Field(300.0, ge=0)  # first pass after start-up, when one is overdue
    compact: bool = True  # vacuum deleted points after each pass (holds the process for ~1 s per 20k points)
    # Daily by default, so a store on embedded defaults always has a recent archive; 0 (or "off") turns it off.
    backup_interval_hours: float | None = Field(24.0, ge=0, le=24 * 31, allow_inf_nan=False)
    backup_keep: int | None = Field(7, ge=1)  # after a scheduled backup, prune all but this many (None: keep all)

    @field_validator("backup_interval_hours", mode="before")
    @classmethod
    def _off(cls, value: object) -> object:
        """``off``, ``false``, ``none`` or an empty value: no scheduled backup (like 0)."""
        if isinstance(value, str) and value.strip().lower() in ("", "off", "false", "none", "no"):
            return None
        return value

    @property
    def backup_every_seconds(self) -> float | None:
        """The scheduled backup's period, or None when it is turned off."""
        return self.backup_interval_hours * 3600 if self.backup_interval_hours else None
