"""Ray start-up, one way for every engine (prep's and studies'): join the cluster at
``address``, or start a local instance with ``num_cpus``; ``close`` stops only what was
started here. The adapter of the ``datasets`` extra's Ray (see :mod:`pagelens.extras`)."""

from __future__ import annotations

from typing import Any

from pagelens.extras import require


class RayCluster:
    def __init__(self, feature: str, address: str | None, num_cpus: int):
        self.ray: Any = require("ray", feature)
        self.started_here = not self.ray.is_initialized()
        if self.started_here:
            if address:
                self.ray.init(address=address, log_to_driver=False)
            else:
                self.ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False, configure_logging=False)

    def cpus(self) -> tuple[float, float]:
        """(free, total) CPUs of the cluster."""
        return (
            float(self.ray.available_resources().get("CPU", 0.0)),
            float(self.ray.cluster_resources().get("CPU", 0.0)),
        )

    def close(self) -> None:
        if self.started_here:
            self.ray.shutdown()
            self.started_here = False
