"""Register bits and match fragments the logical pipelines use (as the reference writes them)."""

from __future__ import annotations

from typing import Final

# Switch pipeline (reg0 bits).
REGBIT_LKUP_FDB: Final = "reg0[11]"  # lookup_fdb() found the inport/eth.src pair
REGBIT_FROM_RAMP: Final = "reg0[14]"  # packet came from a VTEP (RAMP) port
REGBIT_PORT_SEC_DROP: Final = "reg0[15]"  # port security check failed

# Logical flags.
FLAGBIT_NOT_VXLAN: Final = "flags[1] == 0"  # packet did not come in over a VXLAN tunnel

# Switch conntrack / ACL hints (reg0 bits), as ``man ovn-northd`` names them.
REGBIT_CONNTRACK_DEFRAG: Final = "reg0[0]"  # send to conntrack (ct_next) in pre_stateful
REGBIT_CONNTRACK_COMMIT: Final = "reg0[1]"  # commit the connection in the stateful stage
REGBIT_CONNTRACK_NAT: Final = "reg0[2]"  # send to conntrack (ct_lb_mark) in pre_stateful
REGBIT_ACL_HINT_ALLOW_NEW: Final = "reg0[7]"
REGBIT_ACL_HINT_ALLOW: Final = "reg0[8]"
REGBIT_ACL_HINT_DROP: Final = "reg0[9]"
REGBIT_ACL_HINT_BLOCK: Final = "reg0[10]"
REGBIT_ACL_LABEL: Final = "reg0[13]"  # commit reg3 as ct_label.label
REGBIT_ACL_STATELESS: Final = "reg0[16]"  # matched an allow-stateless ACL: skip conntrack
REGBIT_ACL_HINT_ALLOW_REL: Final = "reg0[17]"  # reply or related traffic of an allowed connection
REG_ACL_LABEL: Final = "reg3"
