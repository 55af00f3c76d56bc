"""Register bits and match fragments the logical pipelines use (as the reference writes them)."""

from __future__ import annotations

from typing import Final

# Switch pipeline (reg0 bits).
REGBIT_LKUP_FDB: Final = "reg0[11]"  # lookup_fdb() found the inport/eth.src pair
REGBIT_FROM_RAMP: Final = "reg0[14]"  # packet came from a VTEP (RAMP) port
REGBIT_PORT_SEC_DROP: Final = "reg0[15]"  # port security check failed

# Logical flags.
FLAGBIT_NOT_VXLAN: Final = "flags[1] == 0"  # packet did not come in over a VXLAN tunnel
